// Signing in to the portal over real HTTPS: the form, the session cookie and its
// attributes, the session being the API's (expiry, password change, logout), the
// login throttle per client address, and the two ports serving only their own.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { setPassword } from '../../src/admin/accounts.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';
import { sessionHeader } from '../support/sessions.ts';

const FAILED = 'Invalid username or password';

for (const kind of DB_KINDS) {
  describe(`portal sign-in (${kind})`, () => {
    let svc: PortalService;
    let company: number;
    before(async () => {
      svc = await startPortal(kind);
      company = await svc.company('Calibration Lab');
    });
    after(() => svc.close());

    it('shows the form with its labels and button, and sends a signed-out visitor to it', async () => {
      const browser = new Browser(svc.portalPort);
      const form = await browser.get('/login');
      assert.equal(form.status, 200);
      assert.match(form.text, /<label for="username">Username<\/label>/);
      assert.match(form.text, /<label for="password">Password<\/label>/);
      assert.match(form.text, /<button type="submit">Sign in<\/button>/);
      assert.match(form.text, /<title>Sign in — Asset Tracker<\/title>/);
      for (const path of ['/', '/assets', '/messages', '/account', '/queue', '/assets/1']) {
        const page = await browser.get(path);
        assert.equal(page.status, 303, path);
        assert.equal(page.headers.location, '/login');
      }
    });

    it('signs in with a 303 to / and a __Host- cookie that is Secure, HttpOnly, SameSite=Lax, Path=/; the token is in no page', async () => {
      const user = await portalUser(svc, company);
      const browser = new Browser(svc.portalPort);
      const res = await browser.signIn(user.username, user.password);
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, '/');
      const [cookie] = res.headers['set-cookie'] as string[];
      assert.match(cookie!, /^__Host-session=[0-9a-f]{64}; Secure; HttpOnly; SameSite=Lax; Path=\/$/);
      const token = browser.cookie!.split('=')[1]!;
      for (const path of ['/', '/assets', '/messages', '/account', '/queue', '/logout']) {
        const page = await browser.get(path);
        assert.equal(page.status, 200, path);
        assert.ok(!page.text.includes(token), `${path} does not show the session token`);
      }
      assert.equal((await browser.get('/login')).headers.location, '/', 'signed in, the form sends you home');
    });

    it('refuses a wrong password, an unknown user and an empty form alike: 401 with the form again', async () => {
      const user = await portalUser(svc, company);
      for (const [username, password] of [[user.username, 'not the password'], ['nobody-at-all', 'whatever pass'], ['', '']] as const) {
        const browser = new Browser(svc.portalPort);
        const res = await browser.signIn(username, password);
        assert.equal(res.status, 401);
        assert.match(res.text, new RegExp(FAILED));
        assert.match(res.text, /<label for="password">Password<\/label>/);
        assert.equal(res.headers['set-cookie'], undefined);
      }
    });

    it('throttles a username after a failure (429 with Retry-After), and counts the failure in the audit log', async () => {
      const user = await portalUser(svc, company);
      const browser = new Browser(svc.portalPort);
      assert.equal((await browser.signIn(user.username, 'wrong password')).status, 401);
      const res = await browser.signIn(user.username, user.password);
      assert.equal(res.status, 429);
      assert.equal(res.headers['retry-after'], '1');
      assert.match(res.text, /Can&#39;t retry login this soon after a failed authentication. Please wait 1 seconds/);
      svc.clock.advance(1500);
      assert.equal((await browser.signIn(user.username, user.password)).status, 303);
      const entries = await sql<{ action: string; client_id: number | null; ip: string; user_id: number | null }>`SELECT action, client_id, ip, user_id
        FROM auditlog WHERE endpoint = 'login' AND (message LIKE ${`%${user.username}%`} OR record_id = ${user.id}) ORDER BY id`.execute(svc.database.db);
      assert.deepEqual(entries.rows.map((e) => [e.action, e.client_id, e.ip, e.user_id === null ? null : Number(e.user_id)]),
        [['login', null, '127.0.0.1', null], ['login', null, '127.0.0.1', user.id]]);
    });

    it('a client address has an hourly budget of failures, as a certificate has', async () => {
      const rows = await sql<{ failures: number }>`SELECT failures FROM login_address_budget WHERE address = '127.0.0.1'`.execute(svc.database.db);
      assert.ok(Number(rows.rows[0]?.failures) >= 1, 'the failures above were counted against 127.0.0.1');
    });

    it('is the API\'s session: bound to no certificate (so the API refuses it), ended by logout, a password change and 24 h idle', async () => {
      const user = await portalUser(svc, company);
      const { client } = await svc.certificate(company, { impersonation: true });
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const token = browser.cookie!.split('=')[1]!;
      const row = await sql<{ client_id: number | null }>`SELECT client_id FROM sessions WHERE user_id = ${user.id}`.execute(svc.database.db);
      assert.deepEqual(row.rows.map((r) => r.client_id), [null]);
      assert.equal((await client.get('/3.0/assets', { headers: sessionHeader(token) })).status, 401, 'the API does not take a portal session');

      svc.clock.advance(23 * 3_600_000);
      assert.equal((await browser.get('/')).status, 200, 'each use moves the expiry');
      svc.clock.advance(24 * 3_600_000 + 1000);
      assert.equal((await browser.get('/')).headers.location, '/login', 'expired after 24 h without use');

      await browser.signIn(user.username, user.password);
      await setPassword(svc.database, user.id, 'another good password');
      assert.equal((await browser.get('/')).headers.location, '/login', 'a new password ends the session');

      await browser.signIn(user.username, 'another good password');
      const csrf = await browser.formToken('/logout');
      const out = await browser.post('/logout', { csrf });
      assert.equal(out.status, 303);
      assert.equal(out.headers.location, '/login');
      assert.match((out.headers['set-cookie'] as string[])[0]!, /^__Host-session=; .*Max-Age=0/);
      const left = await sql`SELECT id FROM sessions WHERE user_id = ${user.id}`.execute(svc.database.db);
      assert.equal(left.rows.length, 0, 'the session row is gone');
    });

    it('the portal port serves no API, and the API port serves no portal', async () => {
      const browser = new Browser(svc.portalPort);
      const api = await browser.get('/3.0/assets');
      assert.equal(api.status, 404);
      assert.match(api.headers['content-type'] as string, /^text\/html/);
      const onApi = await svc.client(null).get('/login');
      assert.notEqual(onApi.status, 200);
      assert.match(String(onApi.headers['content-type']), /^application\/json/);
    });
  });
}
