// Recording a check on the portal: the verdicts shown before saving are the
// endpoint's, saving is the assetchecks PUT (numbers exactly as typed), a refusal
// shows the API's message with nothing saved, and a readonly user gets the API's 403.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { addDays, formatDate } from '../../src/model/dates.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';
import { create } from '../http/resources-support.ts';

for (const kind of DB_KINDS) {
  describe(`portal check form (${kind})`, () => {
    let svc: PortalService;
    let company: number;
    let asset: number;
    let today: string;
    before(async () => {
      svc = await startPortal(kind);
      today = formatDate(svc.clock.now());
      company = await svc.company('Gauges Ltd');
      const api = (await svc.certificate(company)).client;
      asset = await create(api, 'assets', { asset_no: 'PG-7', description: 'Pressure gauge', period: 6, next_check: addDays(today, -1) });
    });
    after(() => svc.close());

    const checks = async () => (await sql<{ result: string; points: string; check_date: string }>`SELECT result, points, check_date
      FROM assetchecks WHERE asset_id = ${asset}`.execute(svc.database.db)).rows;

    const point = (i: number, p: Record<string, string>) => Object.fromEntries(Object.entries(p).map(([k, v]) => [`${k}_${i}`, v]));

    it('shows the verdicts before saving, then saves through the endpoint with the numbers as typed', async () => {
      const user = await portalUser(svc, company);
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const form = await browser.get(`/assets/${asset}/checks/new`);
      assert.equal(form.status, 200);
      const csrf = /name="csrf" value="([0-9a-f]+)"/.exec(form.text)![1]!;
      const fields = {
        csrf, rows: '3', check_date: today, check_type: 'calibration', performed_by: 'Lab One', certificate_no: 'C-1',
        ...point(0, { name: '10 bar', unit: 'bar', lower_limit: '9.9', upper_limit: '10.1', as_found: '10.10', uncertainty: '0.02' }),
        ...point(1, { name: '20 bar', unit: 'bar', lower_limit: '19.8', upper_limit: '20.2', as_found: '20.0' }),
      };
      const shown = await browser.post(`/assets/${asset}/checks/new`, { ...fields, action: 'preview' });
      assert.equal(shown.status, 200);
      assert.match(shown.text, /the check's result is <strong>conditional<\/strong>/);
      assert.match(shown.text, /verdict-conditional">conditional</);
      assert.equal((await checks()).length, 0, 'nothing saved by showing the verdicts');
      const saved = await browser.post(`/assets/${asset}/checks/new`, { ...fields, action: 'save' });
      assert.equal(saved.status, 303);
      assert.equal(saved.headers.location, `/assets/${asset}`);
      const [check] = await checks();
      assert.equal(check!.result, 'conditional');
      assert.match(String(check!.points), /"as_found":\s*10\.10\b/);
      assert.match((await browser.get(`/assets/${asset}`)).text, /result <span class="verdict-conditional">conditional<\/span>/);
    });

    it('a refused check shows the API\'s message and saves nothing; a readonly user gets the API\'s 403', async () => {
      const user = await portalUser(svc, company);
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const csrf = await browser.formToken(`/assets/${asset}/checks/new`);
      const before = (await checks()).length;
      const bad = await browser.post(`/assets/${asset}/checks/new`, { csrf, rows: '1', check_date: today, action: 'save',
        ...point(0, { name: 'x', lower_limit: '5', upper_limit: '1', as_found: '3' }) });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /Field verification failed, invalid value for points/);
      const future = await browser.post(`/assets/${asset}/checks/new`, { csrf, rows: '1', check_date: addDays(today, 5), result: 'pass', action: 'save' });
      assert.equal(future.status, 400);
      assert.match(future.text, /invalid value for check_date/);
      assert.equal((await checks()).length, before);

      const reader = await portalUser(svc, company, 'readonly');
      const readonly = new Browser(svc.portalPort);
      await readonly.signIn(reader.username, reader.password);
      const page = await readonly.get(`/assets/${asset}/checks/new`);
      assert.equal(page.status, 403);
      assert.match(page.text, /Access denied: PUT on assetchecks requires user/);
      assert.doesNotMatch((await readonly.get(`/assets/${asset}`)).text, /Record a check/);
      const token = await readonly.formToken('/account');
      const post = await readonly.post(`/assets/${asset}/checks/new`, { csrf: token, rows: '1', check_date: today, result: 'pass', action: 'save' });
      assert.equal(post.status, 403);
      assert.equal((await checks()).length, before);
    });
  });
}
