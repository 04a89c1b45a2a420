// messages in basic mode: shape, scope, targets, and the per-user
// read state of a message addressed to a whole company.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { addUser } from '../../src/admin/accounts.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { create, expectError, expectOk, keys, list, MESSAGE_FIELDS, nowText, one, stop, unique, update, USER_FIELDS, recordKeys } from './resources-support.ts';

for (const kind of DB_KINDS) {
  describe(`messages (${kind})`, () => {
    let svc: Service;
    let top: number, child: number, other: number;
    let api: TestClient;

    before(async () => {
      ({ svc, top, child, api } = await buildTenancy(kind, { child: 'Child' }));
      other = await svc.company('Other');
    });
    after(() => stop(svc));

    const user = (companyId: number) => create(api, 'users', { username: unique('u'), email: 'u@example.com', company_id: companyId });
    /** A user of the company reads a company-wide message (as that user's session would). */
    const readAs = (messageId: number, userId: number, companyId: number) => sql`INSERT INTO message_reads (message_id, user_id, company_id, read_at)
      VALUES (${messageId}, ${userId}, ${companyId}, ${nowText(svc)})`.execute(svc.database.db);
    const readState = async (id: number) => (await one(api, 'messages', id)).message_read;

    it('fields in order with sender and recipient embeds; defaults', async () => {
      const u = await user(top);
      const id = await create(api, 'messages', { target_user_id: u, messagetext: 'Hello', date_range_start: '2024-01-01', data: { p: 1 } });
      const m = await one(api, 'messages', id);
      assert.deepEqual(keys(m), recordKeys(MESSAGE_FIELDS, 'sender', 'recipient'));
      assert.deepEqual({ ...m, recipient: null }, {
        id, sender_user_id: null, target_user_id: u, company_id: top, message_read: 0, date_range_start: '2024-01-01', date_range_end: null,
        messagetext: 'Hello', data: { p: 1 }, modified: nowText(svc), sender: null, recipient: null, version: 1,
      });
      assert.deepEqual(keys(m.recipient), USER_FIELDS);
      assert.equal(m.recipient!.id, u);
      // A targeted message keeps its own read flag.
      assert.deepEqual(await update(api, `messages/id=${id}`, { message_read: 1 }), { records_updated: 1, records_found: 1 });
      assert.equal(await readState(id), 1);
    });

    it('basic mode sees every message of the scope, and none outside it', async () => {
      const cu = await user(child);
      const a = await create(api, 'messages', { messagetext: 'to top' });
      const b = await create(api, 'messages', { messagetext: 'to child user', company_id: child, target_user_id: cu });
      const c = await create(api, 'messages', { messagetext: 'to child', company_id: child });
      const otherApi = (await svc.certificate(other)).client;
      const d = await create(otherApi, 'messages', { messagetext: 'elsewhere' });
      const seen = (await list(api, 'messages')).map((m) => m.id);
      for (const id of [a, b, c]) assert.ok(seen.includes(id), `message ${id} should be visible`);
      assert.ok(!seen.includes(d));
      const childApi = (await svc.certificate(child)).client;
      assert.deepEqual((await list(childApi, 'messages')).map((m) => m.id).filter((id) => [a, b, c, d].includes(id)), [b, c]);
    });

    it('a null-target message reads 1 only once every user of its company has read it', async () => {
      const company = await svc.company('Readers', top);
      const u1 = await user(company);
      const u2 = await user(company);
      const id = await create(api, 'messages', { messagetext: 'to all', company_id: company });
      assert.equal(await readState(id), 0);
      await readAs(id, u1, company);
      assert.equal(await readState(id), 0);
      assert.deepEqual((await list(api, `messages/id=${id}/message_read=0`)).length, 1);
      await readAs(id, u2, company);
      assert.equal(await readState(id), 1);
      assert.deepEqual((await list(api, `messages/id=${id}/message_read=1`)).length, 1);
      // A new recipient has not read it yet.
      await user(company);
      assert.equal(await readState(id), 0);
    });

    it('POST message_read on a null-target message marks it read (and unread) for every user of the company', async () => {
      const company = await svc.company('Markers', top);
      await user(company);
      await user(company);
      const id = await create(api, 'messages', { messagetext: 'to all', company_id: company });
      assert.deepEqual(await update(api, `messages/id=${id}`, { message_read: 1 }), { records_updated: 1, records_found: 1 });
      assert.equal(await readState(id), 1);
      assert.deepEqual(await update(api, `messages/id=${id}`, { message_read: 1 }), { records_updated: 0, records_found: 1 });
      assert.deepEqual(await update(api, `messages/id=${id}`, { message_read: 0 }), { records_updated: 1, records_found: 1 });
      assert.equal(await readState(id), 0);
    });

    it('target_user_id must be a user of the same company', async () => {
      const childUser = await user(child);
      const outsider = await addUser(svc.database, { companyId: other, username: unique('out'), email: 'o@example.com' });
      for (const target of [childUser, outsider, 999999]) {
        expectError(await api.put('/3.0/messages', { messagetext: 'x', target_user_id: target }), 400, 'Field verification failed, invalid value for target_user_id');
      }
      const ok = await create(api, 'messages', { messagetext: 'x', company_id: child, target_user_id: childUser });
      const topUser = await user(top);
      expectError(await api.post(`/3.0/messages/id=${ok}`, { target_user_id: topUser }), 400, 'Field verification failed, invalid value for target_user_id');
      assert.equal((await one(api, 'messages', ok)).target_user_id, childUser);
    });

    it('sender, ids and modified are not writable; messagetext is limited to 10000 characters', async () => {
      const u = await user(top);
      expectError(await api.put('/3.0/messages', { messagetext: 'x', sender_user_id: u }), 400, 'Field verification failed, invalid field sender_user_id');
      expectError(await api.put('/3.0/messages', { messagetext: 'x', modified: '2024-01-01 00:00:00' }), 400, 'Field verification failed, invalid field modified');
      expectError(await api.put('/3.0/messages', { messagetext: 'x'.repeat(10001) }), 400, 'Field verification failed, invalid value for messagetext');
      await create(api, 'messages', { messagetext: 'x'.repeat(10000) });
      expectError(await api.put('/3.0/messages', { messagetext: 'x', date_range_end: '2024-02-30' }), 400, 'Field verification failed, invalid value for date_range_end');
    });

    it('deleting a message removes it and its read states', async () => {
      const company = await svc.company('Deleters', top);
      const u = await user(company);
      const id = await create(api, 'messages', { messagetext: 'bye', company_id: company });
      await readAs(id, u, company);
      assert.deepEqual(expectOk(await api.delete(`/3.0/messages/id=${id}`)), { records_deleted: 1, records_found: 1 });
      assert.deepEqual(await list(api, `messages/id=${id}`), []);
      const left = await sql`SELECT user_id FROM message_reads WHERE message_id = ${id}`.execute(svc.database.db);
      assert.deepEqual(left.rows, []);
    });
  });
}
