// A filtered list in id order whose matches are dense: its first pages are read by
// walking the table in id order (told so on SQLite; on PostgreSQL by a statement its
// planner may plan once), later pages and rare matches from the filter's index
// (src/engine/list.ts). Either way every page holds exactly the
// records of the match in id order, for a scope of two companies whose records are
// interleaved in id order with a third company's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Statement, Values } from '../../src/db/statements.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { expectOk } from '../support/sessions.ts';
import type { TestClient } from '../support/client.ts';
import type { Asset, Inserted } from '../support/api.ts';

const BATCH = 20;
const ROUNDS = 10;
const PAGE = 30;

for (const kind of DB_KINDS) {
  describe(`pages of a dense filter (${kind})`, () => {
    let svc: Service;
    let top: TestClient;
    const visible: { id: number; due: boolean }[] = [];
    const used: string[] = [];

    before(async () => {
      svc = await startService(kind);
      const [topId, otherId] = [await svc.company('Top'), await svc.company('Other')];
      const childId = await svc.company('Child', topId);
      top = (await svc.certificate(topId)).client;
      const other = (await svc.certificate(otherId)).client;
      let n = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (const [client, company] of [[top, topId], [top, childId], [other, otherId]] as const) {
          const records = Array.from({ length: BATCH }, () => {
            n++;
            return { company_id: company, asset_no: `A-${n}`, next_check: n % 10 === 0 ? '2030-01-01' : '2026-06-01' };
          });
          const made = expectOk<Inserted>(await client.put('/3.0/assets', records), 201);
          if (client === top) made.ids.forEach((id: number, i: number) => visible.push({ id, due: records[i]!.next_check < '2027' }));
        }
      }
      const read = svc.database.read.bind(svc.database);
      (svc.database as { read: typeof read }).read = <R>(statement: Statement, values: Values) => {
        used.push(statement.key.split('|')[0]!);
        return read<R>(statement, values);
      };
    });
    after(() => svc.close());

    it('every page holds the matching records in id order, whichever index reads them', async () => {
      const due = visible.filter((v) => v.due).map((v) => v.id).sort((a, b) => a - b);
      assert.equal(due.length, 360);
      const pages = Math.ceil(due.length / PAGE);
      for (let page = 1; page <= pages + 1; page++) {
        const res = await top.get(`/3.0/assets/next_check<2027-01-01/page=${page}`);
        const records = expectOk<Asset[]>(res);
        assert.deepEqual(records.map((r) => r.id), due.slice((page - 1) * PAGE, page * PAGE), `page ${page}`);
        assert.deepEqual(res.envelope.pagination, { total_pages: pages, total_records: due.length });
      }
      // The scope's ids run from 1 to 580 (the other company's last batch is past them): 30p × 580 ≤ 360²
      // for pages 1–7; from page 8 on the matches are sorted.
      assert.deepEqual(used.filter((k) => k === 'walk' || k === 'page'), [...Array<string>(7).fill('walk'), ...Array<string>(pages - 7).fill('page')]);
    });

    it('rare matches are read from the filter\'s index', async () => {
      used.length = 0;
      const rare = visible.filter((v) => !v.due).map((v) => v.id).sort((a, b) => a - b);
      const records = expectOk<Asset[]>(await top.get('/3.0/assets/next_check>2029-12-31'));
      assert.deepEqual(records.map((r: { id: number }) => r.id), rare.slice(0, PAGE));
      assert.deepEqual(used.filter((k) => k === 'walk' || k === 'page'), ['page']);
    });

    it('an ordered list never walks', async () => {
      used.length = 0;
      const records = expectOk<Asset[]>(await top.get('/3.0/assets/next_check<2027-01-01', { headers: { 'X-API-Result-Order': 'id^' } }));
      const due = visible.filter((v) => v.due).map((v) => v.id).sort((a, b) => b - a);
      assert.deepEqual(records.map((r: { id: number }) => r.id), due.slice(0, PAGE));
      assert.deepEqual(used.filter((k) => k === 'walk' || k === 'page'), ['page']);
    });
  });
}
