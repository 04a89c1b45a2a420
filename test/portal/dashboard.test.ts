// The dashboard judges every asset by its own company's reminder window and today,
// as the reminder run does: in a scope with a child company of another window and
// time zone, its counts, its chart and its most overdue list are those the API gives
// company by company, and no other company's asset is counted.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';
import { create } from '../http/resources-support.ts';

// 20:00 UTC on 30 November: 1 December already in Kiritimati (UTC+14). (The test certificates hold 30 days from now.)
const NOW = new Date('2026-11-30T20:00:00Z');

/** Asset number → next check; R… in the root company (30 days, UTC), C… in the child (90 days, Pacific/Kiritimati). */
const ROOT_ASSETS: Record<string, string | null> = { R1: '2026-11-29', R2: '2026-11-30', R3: '2026-12-30', R4: '2026-12-31', R5: '2027-02-15' };
const CHILD_ASSETS: Record<string, string | null> = { C1: '2026-11-30', C2: '2026-12-01', C3: '2027-01-20', C4: '2027-03-01', C5: '2027-03-02', C6: null };

const countOn = (page: string, label: string): number => {
  const m = new RegExp(`<strong>(\\d+)</strong>${label}<`).exec(page);
  assert.ok(m, `no count labelled ${label}`);
  return Number(m[1]);
};
const chartRows = (page: string) => [...page.matchAll(/<tr><td>([A-Za-z]+(?: \d{4})?)<\/td><td>(\d+)<\/td><\/tr>/g)].map((m) => [m[1], Number(m[2])]);

async function totalOf(api: TestClient, path: string): Promise<number> {
  const res = await api.get(`/3.0/assets/${path}`);
  assert.equal(res.status, 200, res.text);
  return res.envelope.pagination?.total_records ?? 0;
}

for (const kind of DB_KINDS) {
  describe(`portal dashboard, each company's own window (${kind})`, () => {
    let svc: PortalService;
    let root: number, child: number;
    let api: TestClient;
    before(async () => {
      svc = await startPortal(kind);
      svc.clock.set(NOW);
      root = await svc.company('Acme Instruments');
      child = await svc.company('Acme Pacific', root);
      const other = await svc.company('Other Company');
      await sql`UPDATE companies SET data = ${JSON.stringify({ reminder_days: 90, timezone: 'Pacific/Kiritimati' })} WHERE id = ${child}`.execute(svc.database.db);
      api = (await svc.certificate(root)).client;
      const childApi = (await svc.certificate(child)).client;
      const otherApi = (await svc.certificate(other)).client;
      for (const [no, next] of Object.entries(ROOT_ASSETS)) await create(api, 'assets', { asset_no: no, description: 'Gauge', next_check: next });
      for (const [no, next] of Object.entries(CHILD_ASSETS)) await create(childApi, 'assets', { asset_no: no, description: 'Caliper', next_check: next });
      for (const no of ['X1', 'X2']) await create(otherApi, 'assets', { asset_no: no, description: 'Gauge', next_check: '2026-11-01' });
      await sql`UPDATE assets SET last_result = 'fail' WHERE asset_no IN ('R5', 'C3', 'X1')`.execute(svc.database.db);
    });
    after(() => svc.close());

    it('overdue and due soon follow each asset\'s company: the counts equal the API\'s, company by company', async () => {
      const browser = new Browser(svc.portalPort);
      const user = await portalUser(svc, root);
      await browser.signIn(user.username, user.password);
      const page = await browser.get('/');
      assert.equal(page.status, 200);
      // R1 (root, before 30 November) and C1 (30 November is yesterday in Kiritimati); due: R2, R3 within 30 days, C2–C4 within 90.
      assert.equal(countOn(page.text, 'Overdue'), 2);
      assert.equal(countOn(page.text, 'Due soon'), 5);
      assert.equal(countOn(page.text, 'Out of tolerance'), 2);
      assert.equal(countOn(page.text, 'Awaiting approval'), 0);
      assert.match(page.text, /today is 2026-11-30/);

      const windows = [[root, '2026-11-30', '2026-12-30'], [child, '2026-12-01', '2027-03-01']] as const;
      let overdue = 0;
      let due = 0;
      for (const [id, today, soon] of windows) {
        overdue += await totalOf(api, `company_id=${id}/next_check<${today}`);
        due += await totalOf(api, `company_id=${id}/next_check+${today}/next_check-${soon}`);
      }
      assert.equal(countOn(page.text, 'Overdue'), overdue);
      assert.equal(countOn(page.text, 'Due soon'), due);
      assert.equal(countOn(page.text, 'Out of tolerance'), await totalOf(api, 'last_result=fail'));
    });

    it('the chart puts an asset overdue for its company in the first bar, the others in their month; the list shows the overdue only', async () => {
      const browser = new Browser(svc.portalPort);
      const user = await portalUser(svc, root);
      await browser.signIn(user.username, user.password);
      const page = await browser.get('/');
      const rows = chartRows(page.text);
      assert.deepEqual(rows.slice(0, 6), [['Overdue', 2], ['Nov 2026', 1], ['Dec 2026', 3], ['Jan 2027', 1], ['Feb 2027', 1], ['Mar 2027', 2]]);
      assert.equal(rows.length, 13);
      assert.ok(rows.slice(6).every(([, n]) => n === 0));
      const worst = page.text.slice(page.text.indexOf('id="worst-heading"'));
      assert.deepEqual([...worst.matchAll(/>([RCX]\d)<\/a>/g)].map((m) => m[1]), ['R1', 'C1']);
      assert.equal((worst.match(/class="state overdue"/g) ?? []).length, 2);
    });

    it('a user of the child company sees its own window alone', async () => {
      const browser = new Browser(svc.portalPort);
      const user = await portalUser(svc, child);
      await browser.signIn(user.username, user.password);
      const page = await browser.get('/');
      assert.equal(countOn(page.text, 'Overdue'), 1);
      assert.equal(countOn(page.text, 'Due soon'), 3);
      assert.equal(countOn(page.text, 'Out of tolerance'), 1);
      assert.match(page.text, /today is 2026-12-01/);
      assert.deepEqual(chartRows(page.text).slice(0, 5), [['Overdue', 1], ['Dec 2026', 1], ['Jan 2027', 1], ['Feb 2027', 0], ['Mar 2027', 2]]);
    });

    it('with overdue assets in many companies, the list is still the scope\'s most overdue, each overdue for its own company', async () => {
      for (let i = 1; i <= 8; i++) {
        const branch = await svc.company(`Acme Branch ${i}`, root);
        const branchApi = (await svc.certificate(branch)).client;
        await create(branchApi, 'assets', { asset_no: `B${i}`, description: 'Gauge', next_check: `2026-11-${10 + i}` });
        await create(branchApi, 'assets', { asset_no: `D${i}`, description: 'Gauge', next_check: '2026-12-01' });
      }
      const browser = new Browser(svc.portalPort);
      const user = await portalUser(svc, root);
      await browser.signIn(user.username, user.password);
      const page = await browser.get('/');
      assert.equal(countOn(page.text, 'Overdue'), 10);
      assert.equal(countOn(page.text, 'Due soon'), 5 + 8);
      const worst = page.text.slice(page.text.indexOf('id="worst-heading"'));
      assert.deepEqual([...worst.matchAll(/>([A-Z]\d)<\/a>/g)].map((m) => m[1]), ['B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8', 'R1', 'C1']);
    });
  });
}
