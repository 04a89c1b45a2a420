// The audit trail of sessions: every change names the
// session user and the certificate; logins and logouts are entries of their own;
// entries about users and logins are for basic mode and admin sessions only; and
// no password or token is ever written to the audit table or the log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { Api, assertNoSecretsLeaked, BAD_LOGIN, expectError, expectOk, logCapture, makeUser, type TestUser, trail } from '../support/sessions.ts';
import type { AuditEntry, Inserted, LoggedIn } from '../support/api.ts';

const HIDDEN = ['users', 'login', 'logout'];

for (const kind of DB_KINDS) {
  describe(`audit of sessions (${kind})`, () => {
    let svc: Service;
    let C: number;
    let certId: number;
    let api: Api; // impersonation certificate of C; basic mode
    let admin: TestUser, user: TestUser, reader: TestUser;
    let sAdmin: Api, sUser: Api, sReader: Api;
    const logs = logCapture();

    const lastAuditId = async () => {
      const row = await svc.database.db.selectFrom('auditlog').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow();
      return Number(row.id ?? 0);
    };
    /** Every entry with an id above `since`, as basic mode sees them. */
    const entriesSince = async (since: number) => expectOk<AuditEntry[]>(await api.get(`auditlog/id>${since}`));
    /** All pages of a GET list. */
    const allPages = async (client: Api, path: string) => {
      const out: AuditEntry[] = [];
      for (let page = 1; ; page++) {
        const res = await client.get(`${path}/page=${page}`);
        out.push(...expectOk<AuditEntry[]>(res));
        if (page >= res.envelope.pagination!.total_pages) return out;
      }
    };

    before(async () => {
      svc = await startService(kind, { logLevel: 'info', logStream: logs.stream });
      logs.attach(svc);
      C = await svc.company('C');
      const cert = await svc.certificate(C, { impersonation: true });
      certId = cert.info.id;
      api = new Api(svc, cert.client);
      admin = await makeUser(svc, C, { level: 'admin' });
      user = await makeUser(svc, C, { level: 'user' });
      reader = await makeUser(svc, C, { level: 'readonly' });
      [sAdmin, sUser, sReader] = [await api.session(admin), await api.session(user), await api.session(reader)];
    });
    after(() => svc.close());

    it('every change in a session records the user and the certificate', async () => {
      const since = await lastAuditId();
      const dep = expectOk<Inserted>(await sAdmin.put('departments', { description: 'Lab' }), 201).ids[0]!;
      expectOk(await sAdmin.post(`departments/id=${dep}`, { description: 'Lab 2' }));
      expectOk(await sAdmin.delete(`departments/id=${dep}`));
      const queued = expectOk<Inserted>(await sUser.put('assetqueue', { description: 'Scope' }), 201).ids[0]!;
      const note = expectOk<Inserted>(await sUser.put('auditlog', { message: 'checked the shelf' }), 201).ids[0]!;
      const entries = await entriesSince(since);
      const pick = (endpoint: string, action: string, record: number | null) =>
        entries.filter((e) => e.endpoint === endpoint && e.action === action && e.record_id === record);
      const expected: [string, string, number | null, TestUser][] = [
        ['departments', 'create', dep, admin], ['departments', 'update', dep, admin], ['departments', 'delete', dep, admin],
        ['assetqueue', 'create', queued, user], ['auditlog', 'note', null, user],
      ];
      for (const [endpoint, action, record, who] of expected) {
        const found = pick(endpoint, action, record);
        assert.equal(found.length, 1, `${endpoint} ${action} ${record}: ${JSON.stringify(entries)}`);
        assert.equal(found[0]!.user_id, who.id);
        assert.equal(found[0]!.client_id, certId);
        assert.equal(found[0]!.ip, '127.0.0.1');
        assert.equal(found[0]!.company_id, C);
        assert.equal(found[0]!.user!.id, who.id);
      }
      assert.ok(entries.some((e) => e.id === note && e.message === 'checked the shelf'));
      // Basic mode changes have a certificate and no user.
      const since2 = await lastAuditId();
      expectOk(await api.put('locations', { description: 'Store' }), 201);
      const [basic] = await entriesSince(since2);
      assert.equal(basic!.user_id, null);
      assert.equal(basic!.client_id, certId);
    });

    it('login success, login failure and logout are audited, with the reported ip and user agent', async () => {
      const since = await lastAuditId();
      const ok = await api.login(user.username, user.password, { ip: '203.0.113.9', useragent: 'TRPAPI-PHP/1.0' });
      const token = expectOk<LoggedIn>(ok).user_token;
      expectError(await api.login(user.username, 'wrong-password', { ip: '198.51.100.7', useragent: 'curl/8' }), 401, BAD_LOGIN);
      svc.clock.advance(1000);
      expectError(await api.login('nobody-at-all', 'wrong-password'), 401, BAD_LOGIN);
      expectOk(await api.as(token).get('logout'));
      const entries = await entriesSince(since);
      assert.deepEqual(entries.map((e) => e.action), ['login', 'login', 'login', 'logout']);
      const [success, failure, unknown, logout] = entries;
      for (const e of entries) {
        assert.equal(e.client_id, certId);
        assert.equal(e.ip, '127.0.0.1');
        assert.equal(e.endpoint, e.action);
      }
      assert.equal(success!.user_id, user.id);
      assert.equal(success!.company_id, C);
      assert.equal(success!.newdata.reported_ip, '203.0.113.9');
      assert.equal(success!.newdata.useragent, 'TRPAPI-PHP/1.0');
      assert.equal(failure!.user_id, null);
      assert.equal(failure!.newdata.reported_ip, '198.51.100.7');
      assert.equal(failure!.newdata.useragent, 'curl/8');
      assert.notEqual(failure!.message, success!.message);
      assert.equal(unknown!.user_id, null);
      assert.equal(logout!.user_id, user.id);
      assert.equal(logout!.company_id, C);
      // The refused logins (429, 403) are not logins and the text of none of them holds the password.
      for (const e of entries) assert.ok(!JSON.stringify(e).includes(user.password));
    });

    it('the published PHP client\'s loginUser($user, $password) logs in: ip and useragent sent as null mean not given', async () => {
      const since = await lastAuditId();
      // {"username", "password", "ip": null, "useragent": null}, as its curl wrapper sends it: a form Content-Type, its User-Agent, an empty Expect.
      const res = await api.login(user.username, user.password, { ip: null, useragent: null },
        { headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'TRPAPI-PHP/1.0', expect: '' } });
      expectOk(await api.as(expectOk<LoggedIn>(res).user_token).get('logout'));
      const [login] = await entriesSince(since);
      assert.equal(login!.user_id, user.id);
      assert.equal(login!.newdata.reported_ip, null);
      assert.equal(login!.newdata.useragent, null);
      // Required fields stay required.
      expectError(await api.login(user.username, user.password, { password: null }), 400, 'Field verification failed, invalid value for password');
    });

    it('a failed login records no user id, for an existing username as for an unknown one', async () => {
      const target = await makeUser(svc, C, { level: 'readonly' });
      const since = await lastAuditId();
      expectError(await api.login(target.username, 'not-the-password'), 401, BAD_LOGIN);
      expectError(await api.login(`${target.username}-unknown`, 'not-the-password'), 401, BAD_LOGIN);
      svc.clock.advance(2000);
      expectOk(await api.login(target.username, target.password));
      const [existing, unknown, success] = await entriesSince(since);
      for (const e of [existing, unknown]) {
        assert.deepEqual([e!.endpoint, e!.action, e!.record_id, e!.user_id, e!.user, e!.company_id, e!.client_id],
          ['login', 'login', null, null, null, C, certId], JSON.stringify(e));
      }
      // Both read alike, except for the username they were given.
      assert.equal(existing!.message, `Failed login for username ${JSON.stringify(target.username)}`);
      assert.equal(unknown!.message, `Failed login for username ${JSON.stringify(`${target.username}-unknown`)}`);
      assert.deepEqual(existing!.newdata, { ...unknown!.newdata, username: target.username });
      // A success names the user.
      assert.deepEqual([success!.action, success!.record_id, success!.user_id], ['login', target.id, target.id]);
      // Filtering on the user's id finds its successful login only.
      const byRecord = expectOk<AuditEntry[]>(await api.get(`auditlog/endpoint=login/record_id=${target.id}`));
      assert.deepEqual(byRecord.map((e) => e.id), [success!.id]);
    });

    it('entries about users, logins and logouts are visible to basic mode and admin sessions only', async () => {
      // Make sure there is at least one entry of each kind.
      expectOk(await api.post(`users/id=${reader.id}`, { first_name: 'Rita' }));
      expectOk(await sAdmin.post(`password/id=${reader.id}`, { new_password: 'a-new-password-for-rita' }));
      trail(svc).secrets.add('a-new-password-for-rita');
      sReader = await api.session({ ...reader, password: 'a-new-password-for-rita' });
      const everything = await allPages(api, 'auditlog');
      for (const endpoint of HIDDEN) assert.ok(everything.some((e) => e.endpoint === endpoint), `an entry about ${endpoint}`);
      const adminSees = await allPages(sAdmin, 'auditlog');
      const allIds = everything.map((e) => e.id);
      // Entries written by the admin's own call (none for a GET) aside, admin sessions see what basic mode sees.
      assert.deepEqual(adminSees.map((e) => e.id), allIds);
      const visible = everything.filter((e) => !HIDDEN.includes(e.endpoint)).map((e) => e.id);
      assert.ok(visible.length > 0);
      for (const s of [sUser, sReader]) {
        assert.deepEqual((await allPages(s, 'auditlog')).map((e) => e.id), visible);
        for (const filter of ['endpoint=users', 'endpoint=login', 'action=login', 'action=logout', `user_id=${reader.id}/endpoint!departments`]) {
          const res = await s.get(`auditlog/${filter}`);
          const rows = expectOk<AuditEntry[]>(res);
          assert.ok(rows.every((e) => !HIDDEN.includes(e.endpoint)), `${filter}: ${res.text}`);
          assert.equal(res.envelope.pagination!.total_records, rows.length);
        }
        assert.deepEqual(expectOk(await s.get('auditlog/action=login')), []);
        const hiddenId = everything.find((e) => e.endpoint === 'login')!.id;
        assert.deepEqual(expectOk(await s.get(`auditlog/id=${hiddenId}`)), []);
      }
      assert.ok(expectOk<AuditEntry[]>(await sAdmin.get('auditlog/action=login')).length > 0);
    });

    it('entries about messages are visible to basic mode and admin sessions only', async () => {
      const fromBasic = expectOk<Inserted>(await api.put('messages', { messagetext: 'for everyone in C' }), 201).ids[0]!;
      const fromAdmin = expectOk<Inserted>(await sAdmin.put('messages', { messagetext: 'for the user', target_user_id: user.id }), 201).ids[0]!;
      const fromUser = expectOk<Inserted>(await sUser.put('messages', { messagetext: 'from the user' }), 201).ids[0]!;
      expectOk(await sUser.post(`messages/id=${fromAdmin}`, { message_read: 1 }));
      const everything = await allPages(api, 'auditlog/endpoint=messages');
      for (const id of [fromBasic, fromAdmin, fromUser]) {
        assert.ok(everything.some((e) => e.record_id === id && e.action === 'create'), `the creation of message ${id} is audited`);
      }
      assert.deepEqual((await allPages(sAdmin, 'auditlog/endpoint=messages')).map((e) => e.id), everything.map((e) => e.id));
      for (const s of [sReader, sUser]) {
        for (const filter of ['endpoint=messages', `record_id=${fromUser}/endpoint=messages`, `id=${everything[0]!.id}`, 'message~message']) {
          const res = await s.get(`auditlog/${filter}`);
          assert.deepEqual(expectOk(res), [], `${filter}: ${res.text}`);
          assert.deepEqual(res.envelope.pagination, { total_pages: 0, total_records: 0 });
        }
        assert.ok((await allPages(s, 'auditlog')).every((e) => e.endpoint !== 'messages'));
      }
    });

    it('no password or token used above appears in the audit table, the log, or a response', async () => {
      assert.ok(trail(svc).logs.join('').includes('/3.0/departments'), 'the service logged its requests at info level');
      await assertNoSecretsLeaked(svc);
    });
  });
}
