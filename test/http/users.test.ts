// users: shape, no password in or out, system-wide
// usernames, validated email and permissions, and what deleting a user does.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { addUser } from '../../src/admin/accounts.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import {
  auditOf, COMPANY_FIELDS, countRows, create, expectDataError, expectError, expectOk, keys, list, nowText, one, stop, unique, update, USER_FIELDS, recordKeys,
} from './resources-support.ts';

const badPermissions = 'Field verification failed, invalid value for permissions';

for (const kind of DB_KINDS) {
  describe(`users (${kind})`, () => {
    let svc: Service;
    let top: number, other: number;
    let api: TestClient;

    before(async () => {
      ({ svc, top, api } = await buildTenancy(kind));
      other = await svc.company('Other');
    });
    after(() => stop(svc));

    it('fields in order with the company embed, and the defaults', async () => {
      const username = unique('ann');
      const id = await create(api, 'users', { username, email: 'ann@example.com', first_name: 'Ann' });
      const u = await one(api, 'users', id);
      assert.deepEqual(keys(u), recordKeys(USER_FIELDS, 'company'));
      assert.deepEqual({ ...u, company: null }, {
        id, username, email: 'ann@example.com', first_name: 'Ann', last_name: '', phone: '', email_confirmed: 0,
        password_last_changed: null, permissions: null, company_id: top, reminders: 1, data: null, modified: nowText(svc), company: null, version: 1,
      });
      assert.deepEqual(keys(u.company), COMPANY_FIELDS);
      assert.equal(u.company!.id, top);
    });

    it('no password is accepted or returned', async () => {
      const before = await countRows(svc, 'users');
      expectError(await api.put('/3.0/users', { username: unique('p'), email: 'p@example.com', password: 'secret123' }), 400,
        'Field verification failed, invalid field password');
      expectError(await api.put('/3.0/users', { username: unique('p'), email: 'p@example.com', password_hash: 'x' }), 400,
        'Field verification failed, invalid field password_hash');
      assert.equal(await countRows(svc, 'users'), before);
      const id = await create(api, 'users', { username: unique('p'), email: 'p@example.com' });
      expectError(await api.post(`/3.0/users/id=${id}`, { password: 'secret123' }), 400, 'Field verification failed, invalid field password');
      expectError(await api.post(`/3.0/users/id=${id}`, { password_last_changed: '2024-01-01' }), 400,
        'Field verification failed, invalid field password_last_changed');
      const res = await api.get(`/3.0/users/id=${id}`);
      assert.ok(!/password_hash|"password"|scrypt|argon/.test(res.text), res.text);
    });

    it('username is required and unique in the whole system', async () => {
      expectError(await api.put('/3.0/users', { email: 'x@example.com' }), 400, 'Field verification failed, invalid value for username');
      const taken = unique('taken');
      await addUser(svc.database, { companyId: other, username: taken, email: 't@example.com' }); // outside the scope
      const before = await countRows(svc, 'users');
      expectDataError(await api.put('/3.0/users', { username: taken, email: 'x@example.com' }));
      assert.equal(await countRows(svc, 'users'), before);
      const mine = unique('mine');
      const id = await create(api, 'users', { username: mine, email: 'x@example.com' });
      expectDataError(await api.post(`/3.0/users/id=${id}`, { username: taken }));
      expectDataError(await api.put('/3.0/users', [{ username: unique('n'), email: 'a@example.com' }, { username: mine, email: 'b@example.com' }]));
      assert.equal(await countRows(svc, 'users'), before + 1);
      assert.equal((await one(api, 'users', id)).username, mine);
    });

    it('email is required and must be a valid address', async () => {
      for (const email of ['nope', 'a@b', 'two words@example.com', '@example.com', '', 5]) {
        expectError(await api.put('/3.0/users', { username: unique('e'), email }), 400, 'Field verification failed, invalid value for email');
      }
      expectError(await api.put('/3.0/users', { username: unique('e') }), 400, 'Field verification failed, invalid value for email');
      const id = await create(api, 'users', { username: unique('e'), email: 'ok@example.com' });
      expectError(await api.post(`/3.0/users/id=${id}`, { email: 'broken' }), 400, 'Field verification failed, invalid value for email');
      assert.equal((await one(api, 'users', id)).email, 'ok@example.com');
    });

    it('permissions must have the shape of the access levels', async () => {
      for (const permissions of [{ level: 'admin', can_create_companies: true }, { level: 'readonly' }, { can_create_companies: false }, {}, null]) {
        const id = await create(api, 'users', { username: unique('perm'), email: 'p@example.com', permissions });
        assert.deepEqual((await one(api, 'users', id)).permissions, permissions);
      }
      const id = await create(api, 'users', { username: unique('perm'), email: 'p@example.com' });
      for (const permissions of [{ level: 'root' }, { level: 'Admin' }, { level: 1 }, { can_create_companies: 'yes' }, { other: true }, ['admin'], 'admin', 1]) {
        expectError(await api.put('/3.0/users', { username: unique('perm'), email: 'p@example.com', permissions }), 400, badPermissions);
        expectError(await api.post(`/3.0/users/id=${id}`, { permissions }), 400, badPermissions);
      }
      assert.deepEqual(await update(api, `users/id=${id}`, { permissions: { level: 'user' } }), { records_updated: 1, records_found: 1 });
      assert.deepEqual((await one(api, 'users', id)).permissions, { level: 'user' });
    });

    it('permissions are validated before anything is matched', async () => {
      // Nothing matches these filters; the body is still refused.
      expectError(await api.post('/3.0/users/id=999999', { permissions: { level: 'god' } }), 400, badPermissions);
      const outsider = await addUser(svc.database, { companyId: other, username: unique('out'), email: 'o@example.com' });
      expectError(await api.post(`/3.0/users/id=${outsider}`, { permissions: { level: 'god' } }), 400, badPermissions);
      expectError(await api.post('/3.0/users/username=nobody-has-this-name', { permissions: { can_create_companies: 1 } }), 400, badPermissions);
      // A valid body with nothing matched changes nothing.
      assert.deepEqual(await update(api, 'users/id=999999', { permissions: { level: 'admin' } }), { records_updated: 0, records_found: 0 });
    });

    it('deleting a user sets the sender and target of its messages to null', async () => {
      const gone = await create(api, 'users', { username: unique('gone'), email: 'g@example.com' });
      const stays = await create(api, 'users', { username: unique('stays'), email: 's@example.com' });
      const toGone = await create(api, 'messages', { messagetext: 'for you', target_user_id: gone });
      const fromGone = await create(api, 'messages', { messagetext: 'from you', target_user_id: stays });
      // Only a session can send; stand in for one.
      await sql`UPDATE messages SET sender_user_id = ${gone} WHERE id = ${fromGone}`.execute(svc.database.db);
      assert.equal((await one(api, 'messages', fromGone)).sender!.id, gone);
      assert.deepEqual(expectOk(await api.delete(`/3.0/users/id=${gone}`)), { records_deleted: 1, records_found: 1 });
      assert.deepEqual(await list(api, `users/id=${gone}`), []);
      const a = await one(api, 'messages', toGone);
      assert.deepEqual([a.target_user_id, a.recipient], [null, null]);
      const b = await one(api, 'messages', fromGone);
      assert.deepEqual([b.sender_user_id, b.sender, b.target_user_id], [null, null, stays]);
      const log = await auditOf(api, 'messages', toGone);
      const last = log[log.length - 1]!;
      assert.deepEqual([last.action, last.olddata, last.newdata], ['update', { target_user_id: gone }, { target_user_id: null }]);
      assert.deepEqual((await auditOf(api, 'users', gone)).map((e) => e.action), ['create', 'delete']);
    });

    it('a user still named by a reminder cannot be deleted → 409', async () => {
      const u = await create(api, 'users', { username: unique('rem'), email: 'r@example.com' });
      const asset = await create(api, 'assets', { asset_no: unique('A') });
      await create(api, 'assetreminders', { asset_id: asset, user_id: u, due_date: '2024-09-01', remind_date: '2024-08-01' });
      expectError(await api.delete(`/3.0/users/id=${u}`), 409, `Data Error: users record ${u} is still referenced by assetreminders`);
      assert.equal((await one(api, 'users', u)).id, u);
    });
  });
}
