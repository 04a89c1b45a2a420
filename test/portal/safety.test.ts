// The portal's safety: a changing form needs the session's token and our own
// origin (else 403 and nothing changes), every answer carries the headers that
// stop framing, sniffing and inline scripts, user data is escaped, and a change
// made on the portal is audited with the user, the address and no certificate.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';
import { create } from '../http/resources-support.ts';

for (const kind of DB_KINDS) {
  describe(`portal safety (${kind})`, () => {
    let svc: PortalService;
    let company: number;
    let api: TestClient;
    before(async () => {
      svc = await startPortal(kind);
      company = await svc.company('Works & Sons <Ltd>');
      api = (await svc.certificate(company)).client;
    });
    after(() => svc.close());

    const readState = async (id: number) => Number((await sql<{ n: number }>`SELECT count(*) AS n FROM message_reads WHERE message_id = ${id}`
      .execute(svc.database.db)).rows[0]!.n);

    it('a POST without the form token, with a wrong one, or from another origin is refused with 403 and changes nothing', async () => {
      const user = await portalUser(svc, company);
      const message = await create(api, 'messages', { messagetext: 'Calibrate the scales', target_user_id: null, company_id: company });
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const csrf = await browser.formToken();
      const other = new Browser(svc.portalPort);
      await other.signIn(user.username, user.password);
      const foreign = await other.formToken();
      assert.notEqual(csrf, foreign, 'each session has its own token');
      const attempts: [Record<string, string>, Record<string, string>][] = [
        [{}, {}], [{ csrf: 'f'.repeat(64) }, {}], [{ csrf: foreign }, {}], [{ csrf }, { origin: 'https://evil.example' }],
        [{ csrf }, { origin: `http://localhost:${svc.portalPort}` }],
      ];
      for (const [form, headers] of attempts) {
        const res = await browser.post(`/messages/${message}/read`, form, { headers });
        assert.equal(res.status, 403, JSON.stringify([form, headers]));
        assert.match(res.text, /Nothing was changed/);
      }
      assert.equal(await readState(message), 0, 'still unread');
      const pw = await browser.post('/account/password', { current: user.password, new: 'a brand new password' });
      assert.equal(pw.status, 403);
      assert.equal((await new Browser(svc.portalPort).signIn(user.username, user.password)).status, 303, 'the old password still works');
      const out = await browser.post('/logout', {});
      assert.equal(out.status, 403);
      assert.equal((await browser.get('/')).status, 200, 'still signed in');

      const ok = await browser.post(`/messages/${message}/read`, { csrf }, { headers: { origin: `https://localhost:${svc.portalPort}` } });
      assert.equal(ok.status, 303);
      assert.equal(await readState(message), 1);
    });

    it('every answer sends the CSP (self only, no inline script, no framing), nosniff and same-origin referrers', async () => {
      const user = await portalUser(svc, company);
      const browser = new Browser(svc.portalPort);
      const pages = [await browser.get('/login'), await browser.signIn('no-such-user', 'wrong password')];
      const signedIn = new Browser(svc.portalPort);
      await signedIn.signIn(user.username, user.password);
      for (const path of ['/', '/assets', '/messages', '/account', '/queue', '/nowhere', '/assets/999999', '/static/portal.css', '/brand.css']) {
        pages.push(await signedIn.get(path));
      }
      for (const page of pages) {
        const csp = String(page.headers['content-security-policy']);
        assert.match(csp, /(^|; )default-src 'self'(;|$)/);
        assert.match(csp, /frame-ancestors 'none'/);
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
        assert.equal(page.headers['x-content-type-options'], 'nosniff');
        assert.equal(page.headers['referrer-policy'], 'same-origin');
        assert.doesNotMatch(page.text, /<script|style="/, 'no inline script or style');
      }
    });

    it('escapes user data everywhere it is shown', async () => {
      const user = await portalUser(svc, company);
      const evil = '<script>alert("x")</script>&"\'';
      const asset = await create(api, 'assets', { asset_no: `<b>A-1</b>`, description: evil, status: 'Active', data: { '<i>key</i>': evil } });
      await create(api, 'messages', { messagetext: evil, target_user_id: user.id });
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      for (const path of [`/assets/${asset}`, '/assets', '/messages', '/']) {
        const page = await browser.get(path);
        assert.equal(page.status, 200, path);
        assert.ok(!page.text.includes('<script>alert'), `${path} shows no raw script`);
        assert.ok(!page.text.includes('<b>A-1'), `${path} shows no raw markup`);
      }
      const detail = await browser.get(`/assets/${asset}`);
      assert.ok(detail.text.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&quot;&#39;'));
      assert.ok(detail.text.includes('&lt;i&gt;key&lt;/i&gt;'));
      assert.ok(detail.text.includes('Works &amp; Sons &lt;Ltd&gt;'));
    });

    it('a change made on the portal is audited with the user, the client address and no certificate', async () => {
      const user = await portalUser(svc, company);
      const message = await create(api, 'messages', { messagetext: 'Audit me', target_user_id: user.id });
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const csrf = await browser.formToken();
      assert.equal((await browser.post(`/messages/${message}/read`, { csrf })).status, 303);
      const { rows } = await sql<{ user_id: number; client_id: number | null; ip: string; action: string }>`SELECT user_id, client_id, ip, action
        FROM auditlog WHERE endpoint = 'messages' AND record_id = ${message} ORDER BY id`.execute(svc.database.db);
      const last = rows.at(-1)!;
      assert.deepEqual([Number(last.user_id), last.client_id, last.ip, last.action], [user.id, null, '127.0.0.1', 'update']);
    });
  });
}
