// Impersonation mode: the whole life of a session over real
// HTTPS, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addUser, revokeClient } from '../../src/admin/accounts.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import {
  Api, assertNoSecretsLeaked, BAD_LOGIN, BAD_SESSION, expectError, expectOk, expectSession, hours, logCapture, makeUser,
  sessionHeader, type TestUser, trail,
} from '../support/sessions.ts';
import type { Company, LoggedIn, User } from '../support/api.ts';

const TOKEN = /^[0-9a-f]{64}$/;
const b64 = (s: string) => Buffer.from(s).toString('base64');

for (const kind of DB_KINDS) {
  describe(`sessions (${kind})`, () => {
    let svc: Service;
    // A ─ A1;  B ─ B1 (two separate trees)
    let A: number, A1: number, B: number, B1: number;
    let apiA: Api; // impersonation certificate of A (also usable in basic mode)
    let apiA2: Api; // a second impersonation certificate of A
    let apiB: Api; // impersonation certificate of B
    let apiPlain: Api; // certificate of A without impersonation
    let certAId: number;
    let admin: TestUser; // admin of A
    const logs = logCapture();

    before(async () => {
      svc = await startService(kind, { logLevel: 'info', logStream: logs.stream });
      logs.attach(svc);
      A = await svc.company('A');
      A1 = await svc.company('A1', A);
      B = await svc.company('B');
      B1 = await svc.company('B1', B);
      const ca = await svc.certificate(A, { impersonation: true });
      certAId = ca.info.id;
      apiA = new Api(svc, ca.client);
      apiA2 = new Api(svc, (await svc.certificate(A, { impersonation: true })).client);
      apiB = new Api(svc, (await svc.certificate(B, { impersonation: true })).client);
      apiPlain = new Api(svc, (await svc.certificate(A)).client);
      admin = await makeUser(svc, A, { level: 'admin' });
    });
    after(() => svc.close());

    it('login answers exactly {"message","user_token"} with 64 lower-case hex characters', async () => {
      const res = await apiA.login(admin.username, admin.password);
      const r = expectOk<LoggedIn>(res);
      assert.deepEqual(Object.keys(r), ['message', 'user_token']);
      assert.equal(r.message, 'Authentication successful');
      assert.match(r.user_token, TOKEN);
      assert.ok(res.text.endsWith(`"response":{"message":"Authentication successful","user_token":"${r.user_token}"}}`), res.text);
      // Every login opens a new session with a new token.
      const again = expectOk<LoggedIn>(await apiA.login(admin.username, admin.password));
      assert.notEqual(again.user_token, r.user_token);
    });

    it('a session call runs as the user and every envelope carries request.session', async () => {
      const s = await apiA.session(admin);
      const me = { id: admin.id, companyId: A };
      const list = await s.get(`users/id=${admin.id}`);
      assert.equal(expectOk<User[]>(list)[0]!.username, admin.username);
      expectSession(list, svc, s.token!, me);
      const post = await s.post(`users/id=${admin.id}`, { first_name: 'Ada' });
      assert.deepEqual(expectOk(post), { records_updated: 1, records_found: 1 });
      expectSession(post, svc, s.token!, me);
      const put = await s.put('departments', { description: 'Lab' });
      expectOk(put, 201);
      expectSession(put, svc, s.token!, me);
      const bad = await s.get('users/nosuchfield=1');
      expectError(bad, 400, 'Invalid filter definition: nosuchfield=1');
      expectSession(bad, svc, s.token!, me);
      const out = await s.get('logout');
      expectSession(out, svc, s.token!, me);
      // Basic mode: session null.
      assert.equal((await apiA.get('users')).envelope.request.session, null);
    });

    it('a session expires 24 hours after its last use (sliding)', async () => {
      const s = await apiA.session(admin);
      svc.clock.advance(hours(23));
      const first = await s.get('companies');
      expectOk(first);
      expectSession(first, svc, s.token!, { id: admin.id, companyId: A });
      svc.clock.advance(hours(23));
      expectOk(await s.get('companies'));
      svc.clock.advance(hours(24) - 1000);
      expectOk(await s.get('companies'));
      svc.clock.advance(hours(24));
      expectError(await s.get('companies'), 401, BAD_SESSION);
      // Still gone a moment later, and other sessions are unaffected.
      expectError(await s.get('companies'), 401, BAD_SESSION);
      const fresh = await apiA.session(admin);
      expectOk(await fresh.get('companies'));
    });

    it('logout ends the session; the token is refused afterwards', async () => {
      const s = await apiA.session(admin);
      const other = await apiA.session(admin);
      const out = await s.get('logout');
      assert.deepEqual(expectOk(out), { message: 'Session logged out' });
      assert.ok(out.text.endsWith('"response":{"message":"Session logged out"}}'), out.text);
      expectError(await s.get('companies'), 401, BAD_SESSION);
      expectError(await s.get('logout'), 401, BAD_SESSION);
      // Concurrent sessions of the same user live on.
      expectOk(await other.get('companies'));
    });

    it('logout without a session header → 400; with a bad one → 401', async () => {
      expectError(await apiA.get('logout'), 400, 'No session to log out');
      expectError(await apiPlain.get('logout'), 400, 'No session to log out');
      expectError(await apiA.get('logout', { headers: { authorization: `Basic ${b64(`session:${'0'.repeat(64)}`)}` } }), 401, BAD_SESSION);
    });

    it('a session is bound to the certificate that created it', async () => {
      const s = await apiA.session(admin);
      expectError(await apiA2.as(s.token).get('companies'), 401, BAD_SESSION);
      expectError(await apiB.as(s.token).get('companies'), 401, BAD_SESSION);
      expectError(await apiPlain.as(s.token).get('companies'), 401, BAD_SESSION);
      // The refusal does not end it for its own certificate.
      expectOk(await s.get('companies'));
    });

    it('login through a certificate without impersonation → 403', async () => {
      expectError(await apiPlain.login(admin.username, admin.password), 403, 'Impersonation is not enabled for this certificate');
      expectError(await apiPlain.login(admin.username, 'wrong-password'), 403, 'Impersonation is not enabled for this certificate');
    });

    it('an impersonation key (ikey) → 403', async () => {
      expectError(await apiA.request('POST', '/3.0/login', { body: { ikey: 'abcdef' } }), 403, 'Impersonation keys are not supported');
      expectError(await apiA.login(admin.username, admin.password, { ikey: 'abcdef' }), 403, 'Impersonation keys are not supported');
    });

    it('a wrong password and an unknown username get the same 401', async () => {
      const u = await makeUser(svc, A);
      const wrong = await apiA.login(u.username, `${u.password}x`);
      const unknown = await apiA.login('no-such-user-anywhere', u.password);
      expectError(wrong, 401, BAD_LOGIN);
      expectError(unknown, 401, BAD_LOGIN);
      assert.deepEqual(wrong.envelope.response, unknown.envelope.response);
      assert.deepEqual(wrong.envelope.response, { error: BAD_LOGIN, code: 'bad_login' });
    });

    it('malformed Authorization headers → 401 Bad session token.', async () => {
      const s = await apiA.session(admin);
      const token = s.token!;
      const headers = [
        `Bearer ${token}`,
        `Digest ${b64(`session:${token}`)}`,
        'Basic !!!not-base64!!!',
        'Basic',
        `Basic ${b64(`user:${token}`)}`,
        `Basic ${b64(`${admin.username}:${admin.password}`)}`,
        `Basic ${b64(token)}`,
        `Basic ${b64('session:')}`,
        `Basic ${b64(`Session:${token}`)}`,
        `Basic ${b64(`session:${token.slice(0, 63)}`)}`,
        `Basic ${b64(`session:${'f'.repeat(64)}`)}`,
      ];
      for (const authorization of headers) {
        const res = await apiA.get('companies', { headers: { authorization } });
        expectError(res, 401, BAD_SESSION);
        assert.equal(res.envelope.request.session, null);
      }
      // The correct form still works.
      expectOk(await apiA.get('companies', { headers: sessionHeader(token) }));
    });

    it('a bad session header is checked after endpoint and verb, and before the access level', async () => {
      const bad = { headers: { authorization: 'Bearer nope' } };
      expectError(await apiA.get('nosuch', bad), 404, 'Endpoint nosuch does not exist');
      expectError(await apiA.request('PUT', '/2.0/companies', bad), 404, 'API version 2.0 is not supported');
      expectError(await apiA.delete('logout', bad), 405, 'Method DELETE not supported on endpoint logout');
      const reader = await makeUser(svc, A, { level: 'readonly' });
      const s = await apiA.session(reader);
      expectError(await s.put('companies', { name: 'X' }), 403, 'Access denied: PUT on companies requires admin with can_create_companies');
      expectError(await apiA.put('companies', { name: 'X' }, bad), 401, BAD_SESSION);
      // A certificate without impersonation has no sessions: any Authorization header is a bad one.
      expectError(await apiPlain.get('companies', bad), 401, BAD_SESSION);
      expectError(await apiPlain.get('companies', { headers: sessionHeader('a'.repeat(64)) }), 401, BAD_SESSION);
    });

    it('a user without a password cannot log in', async () => {
      const username = `nopw-${Date.now()}`;
      await addUser(svc.database, { companyId: A, username, email: `${username}@example.com` }, svc.clock);
      expectError(await apiA.login(username, ''), 401, BAD_LOGIN);
      svc.clock.advance(1000);
      expectError(await apiA.login(username, 'any-password-at-all'), 401, BAD_LOGIN);
      svc.clock.advance(2000);
    });

    it('login ignores any session header', async () => {
      const other = await makeUser(svc, A);
      const s = await apiA.session(admin);
      const viaGarbage = await apiA.login(other.username, other.password, {}, { headers: { authorization: 'Bearer garbage' } });
      const token = expectOk<LoggedIn>(viaGarbage).user_token;
      const viaSession = await s.login(other.username, other.password);
      const token2 = expectOk<LoggedIn>(viaSession).user_token;
      for (const t of [token, token2]) {
        const res = await apiA.as(t).get('companies');
        expectSession(res, svc, t, { id: other.id, companyId: A });
      }
    });

    it('revoking the certificate ends its sessions', async () => {
      const c = await svc.certificate(A, { impersonation: true });
      const api = new Api(svc, c.client);
      const s = await api.session(admin);
      const elsewhere = await apiA.session(admin);
      expectOk(await s.get('companies'));
      await revokeClient(svc.database, c.info.id, svc.clock);
      const res = await s.get('companies');
      expectError(res, 401, `You do not have access to the API. Your signature: ${c.info.fingerprint}`);
      const left = await svc.database.db.selectFrom('sessions').select('id').where('client_id', '=', c.info.id).execute();
      assert.deepEqual(left, []);
      expectOk(await elsewhere.get('companies'));
    });

    it('removing the certificate\'s impersonation right ends its sessions', async () => {
      const c = await svc.certificate(A, { impersonation: true });
      const api = new Api(svc, c.client);
      const s = await api.session(admin);
      expectOk(await s.get('companies'));
      // Changed behind the service's back, as another instance or an operator's SQL would: the
      // database announces it (PostgreSQL) or it is read afresh (SQLite) — at once, or within moments.
      await svc.database.db.updateTable('clients').set({ impersonation: 0 }).where('id', '=', c.info.id).execute();
      expectError(await eventually(() => s.get('companies'), (r) => r.status !== 200), 401, BAD_SESSION);
      // The certificate itself still works in basic mode.
      expectOk(await api.get('companies'));
    });

    it('deleting the user ends the user\'s sessions', async () => {
      const u = await makeUser(svc, A1, { level: 'admin' });
      const s1 = await apiA.session(u);
      const s2 = await apiB.session(u);
      expectOk(await s1.get('companies'));
      assert.deepEqual(expectOk(await apiA.delete(`users/id=${u.id}`)), { records_deleted: 1, records_found: 1 });
      expectError(await s1.get('companies'), 401, BAD_SESSION);
      expectError(await s2.get('companies'), 401, BAD_SESSION);
      const left = await svc.database.db.selectFrom('sessions').select('id').where('user_id', '=', u.id).execute();
      assert.deepEqual(left, []);
      expectError(await apiA.login(u.username, u.password), 401, BAD_LOGIN);
    });

    it('a change of the user\'s company applies on the next call', async () => {
      const u = await makeUser(svc, A1, { level: 'admin' });
      const s = await apiA.session(u);
      assert.deepEqual(expectOk<Company[]>(await s.get('companies')).map((c) => c.id), [A1]);
      await svc.database.db.updateTable('users').set({ company_id: B }).where('id', '=', u.id).execute();
      const res = await s.get('companies');
      assert.deepEqual(expectOk<Company[]>(res).map((c) => c.id), [B, B1]);
      expectSession(res, svc, s.token!, { id: u.id, companyId: B });
    });

    it('a change of the user\'s permissions applies on the next call', async () => {
      const u = await makeUser(svc, A, { level: 'admin' });
      const s = await apiA.session(u);
      expectOk(await s.put('locations', { description: 'Shelf 1' }), 201);
      assert.deepEqual(expectOk(await apiA.post(`users/id=${u.id}`, { permissions: { level: 'readonly' } })), { records_updated: 1, records_found: 1 });
      expectError(await s.put('locations', { description: 'Shelf 2' }), 403, 'Access denied: PUT on locations requires admin');
      expectError(await s.put('assetqueue', { description: 'Scope' }), 403, 'Access denied: PUT on assetqueue requires user');
      expectOk(await apiA.post(`users/id=${u.id}`, { permissions: null }));
      expectOk(await s.put('assetqueue', { description: 'Scope' }), 201);
      expectError(await s.put('locations', { description: 'Shelf 2' }), 403, 'Access denied: PUT on locations requires admin');
      expectOk(await apiA.post(`users/id=${u.id}`, { permissions: { level: 'admin' } }));
      expectOk(await s.put('locations', { description: 'Shelf 2' }), 201);
    });

    it('the scope is the user\'s company tree, whichever certificate logged in', async () => {
      const ub = await makeUser(svc, B);
      const ua = await makeUser(svc, A);
      const sb = await apiA.session(ub); // B's user through A's certificate
      const rb = await sb.get('companies');
      assert.deepEqual(expectOk<Company[]>(rb).map((c) => c.id), [B, B1]);
      expectSession(rb, svc, sb.token!, { id: ub.id, companyId: B });
      const usersB = expectOk<User[]>(await sb.get('users')).map((u) => u.company_id);
      assert.ok(usersB.length > 0 && usersB.every((c: number) => c === B || c === B1), String(usersB));
      assert.deepEqual(expectOk(await sb.get(`companies/id=${A}`)), []);
      assert.deepEqual(expectOk(await sb.get(`users/id=${ua.id}`)), []);
      const sa = await apiB.session(ua); // and the reverse
      assert.deepEqual(expectOk<Company[]>(await sa.get('companies')).map((c) => c.id), [A, A1]);
      assert.deepEqual(expectOk(await sa.get(`users/id=${ub.id}`)), []);
      assert.deepEqual(expectOk<User[]>(await sa.get(`users/id=${ua.id}`)).map((u) => u.id), [ua.id]);
      // The certificates themselves keep their own scope in basic mode.
      assert.deepEqual(expectOk<Company[]>(await apiA.get('companies')).map((c) => c.id), [A, A1]);
    });

    it('no password or token used above appears in the audit table, the log, or a response', async () => {
      const t = trail(svc);
      assert.ok(t.logs.join('').includes('/3.0/companies'), 'the service logged its requests at info level');
      await assertNoSecretsLeaked(svc);
      // The check does look: a value that is in the audit table is found.
      t.secrets.add(`Registered certificate ${certAId}`);
      await assert.rejects(assertNoSecretsLeaked(svc), /holds a secret/);
      t.secrets.delete(`Registered certificate ${certAId}`);
    });
  });
}
