// Passwords: set only through `password`, never
// accepted or returned by `users`; setting one ends the user's other sessions.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setPassword } from '../../src/admin/accounts.ts';
import { formatDate } from '../../src/model/dates.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { Api, assertNoSecretsLeaked, BAD_LOGIN, BAD_SESSION, expectError, expectOk, makeUser, trail, uniqueName } from '../support/sessions.ts';
import { type AuditEntry, endpointOf, type User } from '../support/api.ts';

const badPassword = 'Field verification failed, invalid value for new_password';
const USER_FIELDS = ['id', 'username', 'email', 'first_name', 'last_name', 'phone', 'email_confirmed', 'password_last_changed',
  'permissions', 'company_id', 'reminders', 'data', 'modified', 'company', 'version'];

for (const kind of DB_KINDS) {
  describe(`passwords (${kind})`, () => {
    let svc: Service;
    let A: number, B: number;
    let api: Api; // impersonation certificate of A, also used in basic mode

    /** A new password, remembered as a secret. */
    const fresh = (p = `new-${uniqueName('pw')}-${Math.random().toString(36).slice(2)}`) => { trail(svc).secrets.add(p); return p; };

    before(async () => {
      svc = await startService(kind);
      A = await svc.company('A');
      B = await svc.company('B');
      api = new Api(svc, (await svc.certificate(A, { impersonation: true })).client);
    });
    after(() => svc.close());

    it('basic mode sets the password of the matched users; the old one stops working', async () => {
      const u = await makeUser(svc, A);
      const v = await makeUser(svc, A);
      svc.clock.advance(2 * 86_400_000);
      const today = formatDate(svc.clock.now());
      const pw = fresh();
      const r = await api.post(`password/id=${u.id}`, { new_password: pw });
      assert.deepEqual(expectOk(r), { records_updated: 1, records_found: 1 });
      assert.equal(expectOk<User[]>(await api.get(`users/id=${u.id}`))[0]!.password_last_changed, today);
      expectError(await api.login(u.username, u.password), 401, BAD_LOGIN);
      svc.clock.advance(1000);
      expectOk(await api.login(u.username, pw));
      // The audit entry of the change says only that the password changed.
      const entries = expectOk<AuditEntry[]>(await api.get(`auditlog/endpoint=users/record_id=${u.id}/action=update`));
      const last = entries[entries.length - 1]!;
      assert.deepEqual(last.olddata, { password: '***' });
      assert.deepEqual(last.newdata, { password: '***', password_last_changed: today });
      // Several users at once; users outside the scope are never matched.
      const outsider = await makeUser(svc, B);
      const pw2 = fresh();
      assert.deepEqual(expectOk(await api.post(`password/id=${u.id}`, { new_password: pw2 })), { records_updated: 1, records_found: 1 });
      assert.deepEqual(expectOk(await api.post(`password/company_id=${A}/id+${Math.min(u.id, v.id)}/id-${Math.max(u.id, v.id)}`, { new_password: pw2 })),
        { records_updated: 2, records_found: 2 });
      assert.deepEqual(expectOk(await api.post(`password/id=${outsider.id}`, { new_password: pw2 })), { records_updated: 0, records_found: 0 });
      expectOk(await api.login(outsider.username, outsider.password));
      expectOk(await api.login(v.username, pw2));
    });

    it('new_password must hold 8 to 1024 characters', async () => {
      const u = await makeUser(svc, A);
      for (const bad of ['1234567', '', 'x'.repeat(1025), '€'.repeat(1025), 12345678, null, ['12345678'], { p: '12345678' }]) {
        expectError(await api.post(`password/id=${u.id}`, { new_password: bad }), 400, badPassword);
      }
      expectError(await api.post(`password/id=${u.id}`, {}), 400, badPassword);
      expectError(await api.post(`password/id=${u.id}`, { new_password: fresh('12345678'), password: 'x' }), 400,
        'Field verification failed, invalid field password');
      expectError(await api.post('password', { new_password: fresh('abcdefgh') }), 400,
        'No fields specified for record updating. This would update ALL password records for your company. Request aborted.');
      expectOk(await api.login(u.username, u.password));
      for (const good of ['12345678', '€'.repeat(8), 'y'.repeat(1024), '€'.repeat(1024)]) {
        assert.deepEqual(expectOk(await api.post(`password/id=${u.id}`, { new_password: fresh(good) })), { records_updated: 1, records_found: 1 });
        expectOk(await api.login(u.username, good));
      }
    });

    it('setting a password ends the user\'s other sessions; the calling session survives', async () => {
      const u = await makeUser(svc, A, { level: 'readonly' });
      const s1 = await api.session(u);
      const s2 = await api.session(u);
      const pw = fresh();
      assert.deepEqual(expectOk(await s1.post(`password/id=${u.id}`, { new_password: pw })), { records_updated: 1, records_found: 1 });
      expectOk(await s1.get('companies'));
      expectError(await s2.get('companies'), 401, BAD_SESSION);
      // An admin changing another user's password ends all of that user's sessions, not its own.
      const admin = await makeUser(svc, A, { level: 'admin' });
      const sa = await api.session(admin);
      expectOk(await sa.post(`password/id=${u.id}`, { new_password: fresh() }));
      expectError(await s1.get('companies'), 401, BAD_SESSION);
      expectOk(await sa.get('companies'));
      // Basic mode ends every session of the user.
      const s3 = await api.session(admin);
      expectOk(await api.post(`password/id=${admin.id}`, { new_password: fresh() }));
      expectError(await sa.get('companies'), 401, BAD_SESSION);
      expectError(await s3.get('companies'), 401, BAD_SESSION);
    });

    it('the operator setting a password (CLI) ends every session of the user', async () => {
      const u = await makeUser(svc, A);
      const s = await api.session(u);
      const pw = fresh();
      await setPassword(svc.database, u.id, pw, svc.clock);
      expectError(await s.get('companies'), 401, BAD_SESSION);
      expectOk(await api.login(u.username, pw));
    });

    for (const level of ['readonly', 'user'] as const) {
      it(`a ${level} session may change only its own password`, async () => {
        const me = await makeUser(svc, A, { level });
        const other = await makeUser(svc, A);
        const s = await api.session(me);
        const denied = 'Access denied: POST on password requires admin';
        expectError(await s.post(`password/id=${other.id}`, { new_password: fresh() }), 403, denied);
        expectError(await s.post(`password/company_id=${A}`, { new_password: fresh() }), 403, denied);
        expectError(await s.post(`password/username=${other.username}`, { new_password: fresh() }), 403, denied);
        expectOk(await api.login(other.username, other.password));
        // A filter that matches nobody changes nothing.
        assert.deepEqual(expectOk(await s.post('password/id=0', { new_password: fresh() })), { records_updated: 0, records_found: 0 });
        const pw = fresh();
        assert.deepEqual(expectOk(await s.post(`password/username=${me.username}`, { new_password: pw })), { records_updated: 1, records_found: 1 });
        expectOk(await api.login(me.username, pw));
        expectError(await s.post(`password/id=${me.id}`, { new_password: 'short' }), 400, badPassword);
      });
    }

    it('an admin session sets a plain user\'s password, not that of a user with rights it does not hold', async () => {
      const admin = await makeUser(svc, A, { level: 'admin', canCreateCompanies: false });
      const creator = await makeUser(svc, A, { level: 'user', canCreateCompanies: true });
      const creatorAdmin = await makeUser(svc, A, { level: 'admin', canCreateCompanies: true });
      const plain = await makeUser(svc, A);
      const s = await api.session(admin);
      const refused = 'Access denied: a session cannot set the password of a user with rights it does not hold';
      for (const target of [creator, creatorAdmin]) {
        const res = await s.post(`password/id=${target.id}`, { new_password: fresh() });
        expectError(res, 403, refused);
        assert.ok(res.errorReply.error.startsWith('Access denied: '));
        expectOk(await api.login(target.username, target.password));
      }
      // Matched together with users it may change: nobody's password changes.
      expectError(await s.post(`password/company_id=${A}`, { new_password: fresh() }), 403, refused);
      expectOk(await api.login(plain.username, plain.password));
      expectOk(await api.login(admin.username, admin.password));
      // A plain user's password: fine, and the old one stops working.
      const pw = fresh();
      assert.deepEqual(expectOk(await s.post(`password/id=${plain.id}`, { new_password: pw })), { records_updated: 1, records_found: 1 });
      expectError(await api.login(plain.username, plain.password), 401, BAD_LOGIN);
      svc.clock.advance(2000);
      expectOk(await api.login(plain.username, pw));
      // An admin with can_create_companies may set the creator's password.
      const sc = await api.session(creatorAdmin);
      const pw2 = fresh();
      assert.deepEqual(expectOk(await sc.post(`password/id=${creator.id}`, { new_password: pw2 })), { records_updated: 1, records_found: 1 });
      expectOk(await api.login(creator.username, pw2));
    });

    it('users never accept or return a password', async () => {
      const u = await makeUser(svc, A);
      expectError(await api.put('users', { username: uniqueName('p'), email: 'p@example.com', password: fresh() }), 400,
        'Field verification failed, invalid field password');
      expectError(await api.post(`users/id=${u.id}`, { password: fresh() }), 400, 'Field verification failed, invalid field password');
      expectError(await api.post(`users/id=${u.id}`, { password_hash: 'x' }), 400, 'Field verification failed, invalid field password_hash');
      expectError(await api.post(`users/id=${u.id}`, { password_last_changed: '2020-01-01' }), 400,
        'Field verification failed, invalid field password_last_changed');
      expectError(await api.get(`users/password_hash~scrypt`), 400, 'Invalid filter definition: password_hash~scrypt');
      const admin = await makeUser(svc, A, { level: 'admin' });
      const s = await api.session(admin);
      for (const client of [api, s]) {
        const res = await client.get('users');
        for (const row of expectOk<User[]>(res)) assert.deepEqual(Object.keys(row), USER_FIELDS);
        assert.ok(!/scrypt|password_hash|"password"/.test(res.text), res.text);
      }
      expectOk(await api.login(u.username, u.password));
    });

    it('randompassword returns one 16-character string', async () => {
      const admin = await makeUser(svc, A, { level: 'readonly' });
      const s = await api.session(admin);
      const seen = new Set<string>();
      for (const client of [api, s, api]) {
        const r = expectOk<{ randompassword: string }[]>(await client.get('randompassword'));
        assert.ok(Array.isArray(r) && r.length === 1, JSON.stringify(r));
        assert.deepEqual(Object.keys(r[0]!), ['randompassword']);
        assert.equal(typeof r[0]!.randompassword, 'string');
        assert.equal([...r[0]!.randompassword].length, 16);
        seen.add(r[0]!.randompassword);
      }
      assert.equal(seen.size, 3);
      for (const p of seen) { trail(svc).secrets.add(p); }
    });

    it('no password or token used above appears in the audit table or a response', async () => {
      // randompassword answers hand out their passwords by design; they are not leaks.
      const t = trail(svc);
      const kept = t.responses.splice(0).filter((r) => endpointOf(r) !== 'randompassword');
      t.responses.push(...kept);
      await assertNoSecretsLeaked(svc);
    });
  });
}
