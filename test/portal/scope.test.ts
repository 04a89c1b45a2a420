// What the portal shows and lets a user do is what the API would: the scope (a
// record of another company is a missing one), the access levels (a readonly user
// is refused with the API's message and status), and the company's look by host.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { addDays, formatDate } from '../../src/model/dates.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';
import { create } from '../http/resources-support.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

for (const kind of DB_KINDS) {
  describe(`portal scope, access and branding (${kind})`, () => {
    let svc: PortalService;
    let acme: number, acmeChild: number, other: number;
    let acmeApi: TestClient, otherApi: TestClient;
    let today: string;
    before(async () => {
      svc = await startPortal(kind);
      today = formatDate(svc.clock.now());
      acme = await svc.company('Acme Instruments');
      acmeChild = await svc.company('Acme North', acme);
      other = await svc.company('Other Company');
      acmeApi = (await svc.certificate(acme)).client;
      otherApi = (await svc.certificate(other)).client;
      await sql`UPDATE companies SET subdomain = 'Acme', logo = ${`data:image/png;base64,${PNG}`},
        styles = ${JSON.stringify({ primary_color: '#0a5', accent_color: 'red;} body{display:none', background: '#fff' })} WHERE id = ${acme}`
        .execute(svc.database.db);
    });
    after(() => svc.close());

    it('another company\'s asset is a missing one: 404, the same page, and never listed or counted', async () => {
      const user = await portalUser(svc, acme);
      const mine = await create(acmeApi, 'assets', { asset_no: 'MINE-1', description: 'Gauge', next_check: addDays(today, -3) });
      const theirs = await create(otherApi, 'assets', { asset_no: 'THEIRS-1', description: 'Gauge', next_check: addDays(today, -3) });
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      assert.equal((await browser.get(`/assets/${mine}`)).status, 200);
      const foreign = await browser.get(`/assets/${theirs}`);
      const missing = await browser.get('/assets/987654321');
      assert.equal(foreign.status, 404);
      assert.equal(missing.status, 404);
      assert.equal(foreign.text.replace(String(theirs), 'N'), missing.text.replace('987654321', 'N'));
      const list = await browser.get('/assets');
      assert.ok(list.text.includes('MINE-1') && !list.text.includes('THEIRS-1'));
      const home = await browser.get('/');
      assert.match(home.text, /<strong>1<\/strong>Overdue/);
      const csv = await browser.get('/assets.csv?state=overdue');
      assert.equal(csv.status, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      assert.ok(csv.text.includes('MINE-1') && !csv.text.includes('THEIRS-1'));
    });

    it('a readonly user reads but may not change: the API\'s 403 message, and nothing changes', async () => {
      const reader = await portalUser(svc, acme, 'readonly');
      const message = await create(acmeApi, 'messages', { messagetext: 'Read only please', target_user_id: reader.id });
      const browser = new Browser(svc.portalPort);
      await browser.signIn(reader.username, reader.password);
      const csrf = await browser.formToken();
      const res = await browser.post(`/messages/${message}/read`, { csrf });
      assert.equal(res.status, 403);
      assert.match(res.text, /Access denied: POST on messages requires user/);
      const { rows } = await sql<{ message_read: number }>`SELECT message_read FROM messages WHERE id = ${message}`.execute(svc.database.db);
      assert.equal(Number(rows[0]!.message_read), 0);
      // A readonly user may still change their own password, as on the API.
      const pw = await browser.post('/account/password', { csrf, current: reader.password, new: 'readonly new password' });
      assert.equal(pw.status, 303);
      assert.equal((await new Browser(svc.portalPort).signIn(reader.username, 'readonly new password')).status, 303);
    });

    it('a wrong current password or a short new one changes nothing', async () => {
      const user = await portalUser(svc, acme);
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const csrf = await browser.formToken();
      const wrong = await browser.post('/account/password', { csrf, current: 'not it at all', new: 'long enough password' });
      assert.equal(wrong.status, 400);
      const short = await browser.post('/account/password', { csrf, current: user.password, new: 'short' });
      assert.equal(short.status, 400);
      assert.match(short.text, /Field verification failed, invalid value for new_password/);
      assert.equal((await new Browser(svc.portalPort).signIn(user.username, user.password)).status, 303);
    });

    it('the host picks the company: its name, logo and checked colours; only its users (and its descendants\') sign in there', async () => {
      const host = 'acme.portal.example';
      const branded = new Browser(svc.portalPort, host);
      const form = await branded.get('/login');
      assert.match(form.text, /<title>Sign in — Acme Instruments<\/title>/);
      assert.match(form.text, /<img class="logo" src="\/brand\/logo" alt="Acme Instruments">/);
      const css = await branded.get('/brand.css');
      assert.match(String(css.headers['content-type']), /^text\/css/);
      assert.match(css.text, /--primary: #00aa55|--primary: #0a5/);
      assert.doesNotMatch(css.text, /red|display|#fff/);
      const logo = await branded.get('/brand/logo');
      assert.equal(logo.headers['content-type'], 'image/png');
      assert.equal((await new Browser(svc.portalPort, 'ACME.Portal.Example').get('/login')).text.includes('Acme Instruments'), true);

      const outsider = await portalUser(svc, other);
      const res = await new Browser(svc.portalPort, host).signIn(outsider.username, outsider.password);
      assert.equal(res.status, 401);
      assert.match(res.text, /Invalid username or password/);
      const child = await portalUser(svc, acmeChild);
      assert.equal((await new Browser(svc.portalPort, host).signIn(child.username, child.password)).status, 303);
      svc.clock.advance(2000);
      const anywhere = new Browser(svc.portalPort, 'localhost');
      assert.equal((await anywhere.signIn(outsider.username, outsider.password)).status, 303, 'localhost lets every user in');
      const plain = await anywhere.get('/');
      assert.match(plain.text, /<title>Dashboard — Other Company<\/title>/, 'signed in, the title names the user\'s company');
      assert.equal((await anywhere.get('/brand.css')).text.includes('--primary'), false);
      assert.equal((await anywhere.get('/brand/logo')).status, 404);
      const unknown = new Browser(svc.portalPort, 'nobody.portal.example');
      assert.match((await unknown.get('/login')).text, /Asset Tracker/);
    });

    it('the asset list searches, filters and sorts through the engine, 30 a page', async () => {
      const user = await portalUser(svc, acmeChild);
      const api = (await svc.certificate(acmeChild)).client;
      for (let i = 1; i <= 35; i++) {
        await create(api, 'assets', { asset_no: `LIST-${String(i).padStart(2, '0')}`, serial_no: `SN${i}`, description: i % 2 ? 'Torque wrench' : 'Caliper',
          next_check: addDays(today, i * 20) });
      }
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const first = await browser.get('/assets');
      assert.equal((first.text.match(/href="\/assets\/\d+"/g) ?? []).length, 30);
      assert.match(first.text, /Page 1 of 2/);
      const second = await browser.get('/assets?page=2');
      assert.equal((second.text.match(/href="\/assets\/\d+"/g) ?? []).length, 5);
      const wrenches = await browser.get('/assets?q=torque');
      assert.match(wrenches.text, /18 assets/);
      const bySerial = await browser.get('/assets?q=SN3&sort=asset_no&dir=desc');
      const order = [...bySerial.text.matchAll(/>(LIST-\d+)</g)].map((m) => m[1]);
      assert.deepEqual(order, ['LIST-35', 'LIST-34', 'LIST-33', 'LIST-32', 'LIST-31', 'LIST-30', 'LIST-03']);
      const due = await browser.get(`/assets?due_before=${addDays(today, 61)}`);
      assert.match(due.text, /3 assets/);
    });
  });
}
