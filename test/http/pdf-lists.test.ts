// Printed lists: GET on assets and assetchecks with `Accept: application/pdf` answers
// every match as an A4 PDF — the caller's company's name and logo, the filter as sent,
// today in the company's time zone, one line per record, `Overdue` on overdue assets,
// "Page N of M" — read back here with a real PDF reader. Accept is weighed by q-value
// against JSON and CSV; formats this list cannot make are refused with 406.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient, TestResponse } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { pdfLines } from '../support/pdf-text.ts';
import { Api, makeUser } from '../support/sessions.ts';
import { create, expectError, expectOk, stop } from './resources-support.ts';
import type { Inserted } from '../support/api.ts';
import { addDays, formatDate } from '../../src/model/dates.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PDF = { headers: { accept: 'application/pdf' } };
const HEADINGS = 'Asset no | Description | Location | Department | Next check | Last result';
const CHECK_HEADINGS = 'Check date | Asset no | Check type | Result | Performed by | Certificate no';
const LONG = 'Torque wrench with an unusually long description '.repeat(6);

/** The next 12:00 UTC (certificates are made in real time, so the clock stays ahead of now): a day later in Kiritimati (UTC+14). */
const NOON = (() => {
  const t = new Date();
  t.setUTCHours(12, 0, 0, 0);
  return t.getTime() > Date.now() ? t : new Date(t.getTime() + 86_400_000);
})();
const D = formatDate(NOON);
const day = (n: number) => addDays(D, n);

/** The PDF's lines, page by page (the answer must be a PDF). */
async function printed(res: TestResponse): Promise<string[][]> {
  assert.equal(res.status, 200, res.text.slice(0, 300));
  assert.equal(res.headers['content-type'], 'application/pdf');
  assert.equal(res.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
  return pdfLines(res.bytes);
}

/** A page's rows: the lines between the column headings and the page's foot. */
const rowsOf = (page: readonly string[]) => page.slice(page.findIndex((l) => l.startsWith('Asset no |') || l.startsWith('Check date |')) + 1, -1);
const footOf = (page: readonly string[]) => page.at(-1)!.replace(' | ', ' ');
/** A page's lines with its foot read as one line ("Page 1 of" and the total are two pieces of text). */
const whole = (page: readonly string[] | undefined) => [...page!.slice(0, -1), footOf(page!)];

for (const kind of DB_KINDS) {
  describe(`PDF lists (${kind})`, () => {
    let svc: Service;
    let api: TestClient, otherApi: TestClient;
    let top: number, child: number;
    const ids: Record<string, number> = {};

    before(async () => {
      ({ svc, top, child, api } = await buildTenancy(kind, { child: 'Child' }));
      // At 12:00 UTC it is already the next day in Kiritimati: what is overdue depends on the company's zone.
      svc.clock.set(NOON);
      expectOk(await api.post(`/3.0/companies/id=${top}`, { logo: `data:image/png;base64,${PNG}`, data: { timezone: 'Pacific/Kiritimati' } }));
      const hall = await create(api, 'locations', { description: 'Hall A' });
      const lab = await create(api, 'departments', { description: 'Lab' });
      const put = async (client: TestClient, body: Record<string, unknown>) => (ids[String(body.asset_no)] = await create(client, 'assets', body));
      await put(api, { asset_no: 'A-1', description: LONG, location_id: hall, department_id: lab, next_check: day(0) });
      await put(api, { asset_no: 'A-2', description: 'Caliper', next_check: day(1) });
      await put(api, { asset_no: 'A-3', description: 'Ünïcødé ✓ 日本 Łódź', next_check: day(-60) });
      await put(api, { asset_no: 'A-4', description: 'Later', next_check: day(180) });
      await put(api, { asset_no: 'C-1', description: 'Child scale', next_check: day(-29), company_id: child });
      const other = await svc.company('Other');
      otherApi = (await svc.certificate(other)).client;
      await put(otherApi, { asset_no: 'O-1', description: 'Not yours', next_check: day(-29) });
      const check = (client: TestClient, body: Record<string, unknown>) => create(client, 'assetchecks', body);
      await check(api, { asset_id: ids['A-1'], check_date: day(-15), result: 'fail', performed_by: 'Jane Roe', certificate_no: 'CERT-1' });
      await check(api, { asset_id: ids['A-2'], check_date: day(-20), result: 'pass', check_type: 'inspection', performed_by: 'Bob', certificate_no: 'CERT-2' });
      await check(otherApi, { asset_id: ids['O-1'], check_date: day(-18), result: 'fail', performed_by: 'Eve', certificate_no: 'CERT-9' });
    });
    after(() => stop(svc));

    it('the heading (company, title, filter as sent, today in the company zone), one line per match in scope, Overdue, the page foot', async () => {
      const res = await api.get(`/3.0/assets/next_check<${day(30)}`, PDF);
      const [page, ...more] = await printed(res);
      assert.deepEqual(more, []);
      assert.deepEqual(page!.slice(0, 5), ['Top', 'Assets', `Filter: next_check<${day(30)}`, `Date: ${day(1)}`, HEADINGS]);
      const rows = rowsOf(page!);
      assert.equal(rows.length, 4, rows.join('\n'));
      // A long description is cut to its column with an ellipsis; characters the standard fonts lack are replaced.
      assert.match(rows[0]!, /^A-1 \| Torque wrench with an unusually .*… \| Hall A \| Lab \| \d{4}-\d\d-\d\d \| fail \| Overdue$/);
      assert.ok(rows[0]!.includes(` | ${day(0)} | fail | `));
      assert.deepEqual(rows.slice(1), [`A-2 | Caliper | ${day(1)} | pass`, `A-3 | Ünïcødé ? ?? Lódz | ${day(-60)} | Overdue`,
        `C-1 | Child scale | ${day(-29)} | Overdue`]);
      assert.equal(footOf(page!), 'Page 1 of 1');
      assert.ok(res.bytes.includes('/Subtype /Image'), 'the logo is drawn');
    });

    it('a filter in the query string is shown decoded; another company sees only its own records, without a logo, in UTC', async () => {
      const [page] = await printed(await otherApi.get(`/3.0/assets?filter=${encodeURIComponent('description~Not yours')}`, PDF));
      assert.deepEqual(whole(page), ['Other', 'Assets', 'Filter: description~Not yours', `Date: ${D}`, HEADINGS,
        `O-1 | Not yours | ${day(-29)} | fail | Overdue`, 'Page 1 of 1']);
      const none = await otherApi.get('/3.0/assets/asset_no=A-1', PDF);
      assert.ok(!none.bytes.includes('/Subtype /Image'));
      assert.deepEqual(rowsOf((await printed(none))[0]!), []);
    });

    it('assetchecks: check_date, asset_no, check_type, result, performed_by, certificate_no for the filter, in scope only', async () => {
      const [page] = await printed(await api.get('/3.0/assetchecks/result=fail', PDF));
      assert.deepEqual(whole(page), ['Top', 'Asset checks', 'Filter: result=fail', `Date: ${day(1)}`, CHECK_HEADINGS,
        `${day(-15)} | A-1 | calibration | fail | Jane Roe | CERT-1`, 'Page 1 of 1']);
      const [all] = await printed(await api.get('/3.0/assetchecks', PDF));
      assert.deepEqual(rowsOf(all!), [`${day(-15)} | A-1 | calibration | fail | Jane Roe | CERT-1`, `${day(-20)} | A-2 | inspection | pass | Bob | CERT-2`]);
      assert.equal(all![2], 'Filter: (none)');
    });

    it('every match, no paging: the headings on every page and "Page N of M" at each foot', async () => {
      const many = await svc.company('Many');
      const manyApi = (await svc.certificate(many)).client;
      const body = Array.from({ length: 130 }, (_, i) => ({ asset_no: `M-${String(i).padStart(3, '0')}`, description: `item ${i}`, next_check: day(200) }));
      expectOk<Inserted>(await manyApi.put('/3.0/assets', body), 201);
      const pages = await printed(await manyApi.get('/3.0/assets', PDF));
      assert.equal(pages.length, 3);
      assert.deepEqual(pages.map(footOf), ['Page 1 of 3', 'Page 2 of 3', 'Page 3 of 3']);
      assert.deepEqual(pages.slice(1).map((p) => p.slice(0, 2)), [['Many — Assets', HEADINGS], ['Many — Assets', HEADINGS]]);
      assert.deepEqual(pages.flatMap(rowsOf), body.map((b) => `${b.asset_no} | ${b.description} | ${day(200)}`));
    });

    it('Accept is weighed by q-value against JSON and CSV', async () => {
      const typeOf = async (accept: string, path = '/3.0/assets/asset_no=A-2') =>
        String((await api.get(path, { headers: { accept } })).headers['content-type']).split(';')[0];
      const cases: [string, string][] = [
        ['application/pdf', 'application/pdf'],
        ['application/json;q=0.9, application/pdf;q=0.5', 'application/json'],
        ['application/json;q=0.5, application/pdf', 'application/pdf'],
        ['text/csv;q=0.8, application/pdf;q=0.9', 'application/pdf'],
        ['text/csv;q=0.9, application/pdf;q=0.8', 'text/csv'],
        ['application/pdf, text/csv', 'application/pdf'],
        ['text/csv, application/pdf', 'text/csv'],
        ['application/json, application/pdf', 'application/pdf'],
        ['*/*, application/pdf;q=0.5', 'application/json'],
        ['application/*', 'application/json'],
        ['text/html, application/pdf;q=0.1', 'application/pdf'],
        ['text/html', 'application/json'],
      ];
      for (const [accept, type] of cases) assert.equal(await typeOf(accept), type, accept);
      // A list without a printed form: PDF beside something it makes is no refusal.
      assert.equal(await typeOf('application/pdf, */*;q=0.1', '/3.0/companies'), 'application/json');
    });

    it('406 for an Accept the list cannot answer; a bad filter is still 400 (as JSON); errors are JSON', async () => {
      const refused = await api.get('/3.0/companies', PDF);
      expectError(refused, 406, 'No format in Accept: application/pdf can be answered; this list answers application/json, text/csv');
      assert.equal(refused.errorReply.code, 'not_acceptable');
      assert.equal(refused.headers['content-type'], 'application/json; charset=utf-8');
      expectError(await api.get('/3.0/assets', { headers: { accept: 'application/json;q=0, application/pdf;q=0' } }), 406,
        'No format in Accept: application/json;q=0, application/pdf;q=0 can be answered; this list answers application/json, text/csv, application/pdf');
      const bad = await api.get('/3.0/assets/next_check', PDF);
      expectError(bad, 400, 'Invalid filter definition: next_check');
      assert.equal(bad.headers['content-type'], 'application/json; charset=utf-8');
      expectError(await api.get('/3.0/assets/nosuch=1', PDF), 400, 'Invalid filter definition: nosuch=1');
    });

    it('a readonly session prints its own company\'s scope', async () => {
      const impersonating = new Api(svc, (await svc.certificate(top, { impersonation: true })).client);
      const reader = await impersonating.session(await makeUser(svc, child, { level: 'readonly' }));
      const [page] = await printed(await reader.get('assets', PDF));
      assert.deepEqual(whole(page), ['Child', 'Assets', 'Filter: (none)', `Date: ${D}`, HEADINGS, `C-1 | Child scale | ${day(-29)} | Overdue`, 'Page 1 of 1']);
      const [checks] = await printed(await reader.get('assetchecks', PDF));
      assert.deepEqual(rowsOf(checks!), []);
    });
  });
}
