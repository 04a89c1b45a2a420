// CSV export: `Accept: text/csv` on a list answers every match, no
// paging, RFC 4180 with a header row: own fields without JSON fields, data keys
// met (sorted), embed names and descriptions; nulls empty; formulas defused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { ASSET_FIELDS, create, expectOk, PLACE_FIELDS, start, stop } from './resources-support.ts';
import type { Asset, Inserted } from '../support/api.ts';

const CSV = { headers: { accept: 'text/csv' } };
/** Assets an export → import round trip carries. */
const ROUND_TRIP = 10_000;

/** RFC 4180: rows of cells, quotes doubled inside quoted cells, CRLF between rows. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; } else cell += c;
  }
  assert.equal(cell + row.join(''), '', 'the text ends with a complete row');
  return rows;
}

for (const kind of DB_KINDS) {
  describe(`CSV export (${kind})`, () => {
    let svc: Service;
    let api: TestClient, childApi: TestClient;
    let top: number, child: number, location: number;

    before(async () => {
      ({ svc, top, child, api } = await buildTenancy(kind, { child: 'Child' }));
      childApi = (await svc.certificate(child)).client;
      location = await create(api, 'locations', { description: 'Hall, "B"\nnorth' });
    });
    after(() => stop(svc));

    it('the header row and one row per record: own fields, data keys met (sorted), embeds; quoting and nulls', async () => {
      const a = await create(api, 'assets', { asset_no: 'Ä-1, "quoted"', description: 'line 1\r\nline 2', location_id: location,
        data: { zeta: 'z', alpha: 5, nested: { x: [1, 2] }, none: null } });
      const b = await create(api, 'assets', { asset_no: 'B-2', company_id: child, data: { beta: 'β' } });
      const r = await api.get('/3.0/assets', CSV);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers['content-type'], 'text/csv; charset=utf-8');
      const [head, ...rows] = parseCsv(r.text);
      const own = ASSET_FIELDS.filter((f) => f !== 'data');
      assert.deepEqual(head, [...own, 'data.alpha', 'data.beta', 'data.nested', 'data.none', 'data.zeta',
        'company.name', 'location.description', 'department.description', 'externaltype.description']);
      assert.equal(rows.length, 2);
      const json = await Promise.all([a, b].map(async (id) => expectOk<Asset[]>(await api.get(`/3.0/assets/id=${id}`))[0]));
      for (const [i, record] of json.entries()) {
        const row = rows[i]!;
        own.forEach((f, k) => assert.equal(row[k], record![f as keyof Asset] === null ? '' : String(record![f as keyof Asset] as string | number), f));
      }
      const at = (i: number, name: string) => rows[i]![head.indexOf(name)];
      assert.equal(at(0, 'asset_no'), 'Ä-1, "quoted"');
      assert.equal(at(0, 'description'), 'line 1\r\nline 2');
      assert.deepEqual([at(0, 'data.alpha'), at(0, 'data.nested'), at(0, 'data.none'), at(0, 'data.zeta'), at(0, 'data.beta')],
        ['5', '{"x":[1,2]}', '', 'z', '']);
      assert.deepEqual([at(0, 'company.name'), at(0, 'location.description'), at(0, 'department.description')], ['Top', 'Hall, "B"\nnorth', '']);
      assert.deepEqual([at(1, 'data.beta'), at(1, 'company.name')], ['β', 'Child']);
    });

    it('cells a spreadsheet would run get a leading quote; one starting with a quote gets one more', async () => {
      const texts = ['=SUM(A1:A9)', '+1', '-2', '@cmd', '\tx', '\rx', "'kept", 'plain'];
      for (const t of texts) await create(api, 'departments', { description: t, data: { v: t } });
      const [head, ...rows] = parseCsv((await api.get('/3.0/departments', CSV)).text);
      const col = head!.indexOf('description');
      assert.deepEqual(rows.map((r) => r[col]), texts.map((t) => (t === 'plain' ? t : `'${t}`)));
      assert.deepEqual(rows.map((r) => r[head!.indexOf('data.v')]), rows.map((r) => r[col]));
    });

    it('every match, past any page: filters, ordering and the scope hold', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 1100; i += 100) {
        const r = expectOk<Inserted>(await api.put('/3.0/locations', Array.from({ length: 100 }, (_, k) => ({ description: `bulk ${i + k}`, data: { n: i + k } }))), 201);
        ids.push(...r.ids);
      }
      const [head, ...rows] = parseCsv((await api.get('/3.0/locations/description~bulk', { headers: { accept: 'text/csv', 'x-api-result-order': 'id^' } })).text);
      assert.deepEqual(head, [...PLACE_FIELDS.filter((f) => f !== 'data'), 'data.n', 'company.name']);
      assert.deepEqual(rows.map((r) => Number(r[0])), [...ids].reverse());
      // The child company's certificate sees none of them; a browser's Accept list still asks for CSV; q=0 refuses it.
      assert.deepEqual(parseCsv((await childApi.get('/3.0/locations', CSV)).text).slice(1), []);
      const listed = await api.get('/3.0/locations/id=1', { headers: { accept: 'text/html, text/csv;q=0.5' } });
      assert.equal(listed.headers['content-type'], 'text/csv; charset=utf-8');
      const json = await api.get('/3.0/locations/id=1', { headers: { accept: 'text/csv;q=0, application/json' } });
      assert.equal(json.headers['content-type'], 'application/json; charset=utf-8');
    });

    it('export → import gives the same records back: unicode, commas, quotes, newlines, formulas, data keys', async () => {
      const texts = ['plain', 'Ünïcødé ✓ 日本', 'a, b', 'say "hi"', 'two\r\nlines', 'lf\nonly', '=1+1', '-5', "'quoted", ' padded ', '😀 "x", y'];
      const records = Array.from({ length: ROUND_TRIP }, (_, i) => {
        const t = texts[i % texts.length]!;
        return { asset_no: `RT-${i}`, description: t, serial_no: texts[(i + 3) % texts.length],
          location_id: i % 2 ? location : null, data: i % 3 ? { note: t, n: `${i}` } : { other: t } };
      });
      for (let i = 0; i < records.length; i += 1000) expectOk(await api.put('/3.0/assets', records.slice(i, i + 1000)), 201);
      const exported = (await api.get('/3.0/assets/asset_no~RT-', CSV)).text;
      const before = parseCsv(exported);
      assert.equal(before.length, ROUND_TRIP + 1);
      expectOk(await api.delete('/3.0/assets/asset_no~RT-'));
      const r = await api.put('/3.0/assets', exported, { headers: { 'content-type': 'text/csv; charset=utf-8' } });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.reply<Inserted>().records_inserted, ROUND_TRIP);
      const after = parseCsv((await api.get('/3.0/assets/asset_no~RT-', CSV)).text);
      const same = (rows: string[][]) => rows.map((row) => row.filter((_, k) => !['id', 'modified'].includes(before[0]![k]!)));
      assert.deepEqual(same(after), same(before));
    });

    it('bad rows refuse the whole file, each listed with its row number and field; nothing is written', async () => {
      const count = async () => expectOk<Asset[]>(await api.get('/3.0/assets/asset_no~BAD-')).length;
      const file = ['asset_no,period,location_id,data.k', 'BAD-1,12,,x', 'BAD-2,twelve,,x', ',1,,x', `BAD-1,1,${location},x`, 'BAD-5,1,999999,x',
        'BAD-6,1'].join('\r\n');
      const r = await api.put('/3.0/assets', file, { headers: { 'content-type': 'text/csv' } });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.errorReply.code, 'invalid_rows');
      assert.equal(r.errorReply.error, 'Invalid rows in CSV: 5');
      assert.deepEqual(r.reply<{ errors: { row: number; field: string | null }[] }>().errors.map((e) => [e.row, e.field]),
        [[2, 'period'], [3, 'asset_no'], [4, 'asset_no'], [5, 'location_id'], [6, null]]);
      assert.equal(await count(), 0);
      const dry = await api.put('/3.0/assets', 'asset_no,description\r\nBAD-7,x\r\nBAD-8,y', { headers: { 'content-type': 'text/csv', 'x-dry-run': 'true' } });
      assert.equal(dry.status, 200, dry.text);
      assert.deepEqual(dry.envelope.response, { records_valid: 2 });
      assert.equal(await count(), 0);
      const unknown = await api.put('/3.0/assets', 'asset_no,colour\r\nBAD-9,red', { headers: { 'content-type': 'text/csv' } });
      assert.equal(unknown.status, 400);
      assert.equal(unknown.errorReply.error, 'Field verification failed, invalid field colour');
      // Read-only and embed columns are taken and ignored; a guard quote is removed.
      const ok = await api.put('/3.0/assets', "id,asset_no,description,modified,company.name\r\n77,OK-1,'=2+2,2000-01-01 00:00:00,Elsewhere",
        { headers: { 'content-type': 'text/csv' } });
      assert.equal(ok.status, 201, ok.text);
      const [made] = expectOk<Asset[]>(await api.get(`/3.0/assets/id=${ok.reply<Inserted>().ids[0]}`));
      assert.deepEqual([made!.asset_no, made!.description, made!.company_id], ['OK-1', '=2+2', top]);
    });

    it('a file over IMPORT_MAX_BYTES is refused with 413; where PUT takes no CSV, the JSON limit holds', async () => {
      const small = await start(kind, { importMaxBytes: 1000, bodyMaxBytes: 500 });
      try {
        const client = (await small.certificate(await small.company('Small'))).client;
        const big = `asset_no\r\n${Array.from({ length: 200 }, (_, i) => `BIG-${i}`).join('\r\n')}`;
        const r = await client.put('/3.0/assets', big, { headers: { 'content-type': 'text/csv' } });
        assert.equal(r.status, 413);
        assert.equal(r.errorReply.error, 'Request body exceeds 1000 bytes');
        const fits = `asset_no\r\n${Array.from({ length: 80 }, (_, i) => `FIT-${i}`).join('\r\n')}`;
        assert.ok(fits.length > 500 && fits.length < 1000);
        assert.equal((await client.put('/3.0/assets', fits, { headers: { 'content-type': 'text/csv' } })).status, 201);
        const note = await client.put('/3.0/auditlog', fits, { headers: { 'content-type': 'text/csv' } });
        assert.equal(note.status, 413);
        assert.equal(note.errorReply.error, 'Request body exceeds 500 bytes');
      } finally {
        await stop(small);
      }
    });

    it('a refused query is refused as JSON, whatever Accept says', async () => {
      const r = await api.get('/3.0/assets/nosuch=1', CSV);
      assert.equal(r.status, 400);
      assert.equal(r.errorReply.code, 'invalid_filter');
    });
  });
}
