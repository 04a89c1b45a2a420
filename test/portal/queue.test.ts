// The queue page: entries awaiting approval, and a request for a new asset that is
// the assetqueue PUT — the API's defaults, refusals and access levels.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';

for (const kind of DB_KINDS) {
  describe(`portal queue (${kind})`, () => {
    let svc: PortalService;
    let company: number;
    before(async () => {
      svc = await startPortal(kind);
      company = await svc.company('Queue Works');
    });
    after(() => svc.close());

    const entries = async () => (await sql<{ description: string; period: number | null; released: number }>`SELECT description, period,
      released FROM assetqueue WHERE company_id = ${company} ORDER BY id`.execute(svc.database.db)).rows;

    it('a user requests a new asset; it waits in the queue; a refusal shows the API\'s message and requests nothing', async () => {
      const user = await portalUser(svc, company);
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const csrf = await browser.formToken('/queue');
      const done = await browser.post('/queue', { csrf, description: 'Torque wrench <40 Nm>', asset_no: 'TW-9', period: '12' });
      assert.equal(done.status, 303);
      assert.equal(done.headers.location, '/queue?requested=1');
      assert.deepEqual((await entries()).map((e) => [e.description, Number(e.period), Number(e.released)]), [['Torque wrench <40 Nm>', 12, 0]]);
      const page = await browser.get('/queue?requested=1');
      assert.match(page.text, /Your request is in the queue/);
      assert.match(page.text, /<td>Torque wrench &lt;40 Nm&gt;<\/td>/);
      const bad = await browser.post('/queue', { csrf, description: 'Gauge', period: 'monthly' });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /Field verification failed, invalid value for period/);
      assert.equal((await entries()).length, 1);
    });

    it('a readonly user sees the queue but no request form, and a request is refused with the API\'s 403', async () => {
      const reader = await portalUser(svc, company, 'readonly');
      const browser = new Browser(svc.portalPort);
      await browser.signIn(reader.username, reader.password);
      const page = await browser.get('/queue');
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /Request a new asset/);
      const csrf = await browser.formToken('/account');
      const refused = await browser.post('/queue', { csrf, description: 'Not allowed' });
      assert.equal(refused.status, 403);
      assert.match(refused.text, /Access denied: PUT on assetqueue requires user/);
      assert.equal((await entries()).some((e) => e.description === 'Not allowed'), false);
    });
  });
}
