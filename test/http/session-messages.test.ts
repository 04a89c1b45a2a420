// Messages in a session: a user sees its own messages only, PUT
// makes it the sender, and a company-wide message's read state is per user.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addDays, formatDate } from '../../src/model/dates.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { Api, assertNoSecretsLeaked, expectError, expectOk, makeUser, type TestUser } from '../support/sessions.ts';
import type { Inserted, Message } from '../support/api.ts';

const DAY = 86_400_000;

for (const kind of DB_KINDS) {
  describe(`messages in a session (${kind})`, () => {
    let svc: Service;
    let C: number, C1: number;
    let api: Api; // impersonation certificate of C; basic mode
    let u1: TestUser, u2: TestUser, u3: TestUser, boss: TestUser; // u1, u2, boss in C; u3 in C1
    let s1: Api, s2: Api, s3: Api, sBoss: Api;
    const m: Record<string, number> = {};

    const ids = async (client: Api, path = 'messages') => {
      const res = await client.get(path);
      const rows = expectOk<Message[]>(res);
      assert.equal(res.envelope.pagination!.total_records, rows.length);
      return rows.map((r) => r.id);
    };
    const readState = async (client: Api, id: number) => {
      const rows = expectOk<Message[]>(await client.get(`messages/id=${id}`));
      assert.equal(rows.length, 1, `message ${id} should be visible`);
      return rows[0]!.message_read;
    };
    /** Moves the clock by whole days, half a day at a time, keeping every session in use (they expire after 24 idle hours). */
    const advanceDays = async (days: number) => {
      for (let i = 0; i < 2 * days; i++) {
        svc.clock.advance(DAY / 2);
        for (const s of [s1, s2, s3, sBoss]) expectOk(await s.get('randompassword'));
      }
    };
    const send = async (client: Api, body: object) => expectOk<Inserted>(await client.put('messages', body), 201).ids[0] as number;

    before(async () => {
      svc = await startService(kind);
      C = await svc.company('C');
      C1 = await svc.company('C1', C);
      api = new Api(svc, (await svc.certificate(C, { impersonation: true })).client);
      u1 = await makeUser(svc, C);
      u2 = await makeUser(svc, C);
      u3 = await makeUser(svc, C1);
      boss = await makeUser(svc, C, { level: 'admin' });
      [s1, s2, s3, sBoss] = [await api.session(u1), await api.session(u2), await api.session(u3), await api.session(boss)];
      const today = formatDate(svc.clock.now());
      m.toU1 = await send(api, { target_user_id: u1.id, messagetext: 'to u1' });
      m.toU2 = await send(api, { target_user_id: u2.id, messagetext: 'to u2' });
      m.soon = await send(api, { messagetext: 'from tomorrow for three days', date_range_start: addDays(today, 1), date_range_end: addDays(today, 3) });
      m.all = await send(api, { messagetext: 'to everyone in C' });
      m.child = await send(api, { company_id: C1, messagetext: 'to everyone in C1' });
      m.past = await send(api, { messagetext: 'expired', date_range_start: addDays(today, -3), date_range_end: addDays(today, -1) });
      m.today = await send(api, { messagetext: 'today only', date_range_start: today, date_range_end: today });
      m.toU3 = await send(api, { company_id: C1, target_user_id: u3.id, messagetext: 'to u3' });
    });
    after(() => svc.close());

    it('basic mode sees every message of the scope, with no sender', async () => {
      const all = await ids(api);
      assert.deepEqual(all, Object.values(m).sort((a, b) => a - b));
      for (const row of expectOk<Message[]>(await api.get('messages'))) assert.equal(row.sender_user_id, null);
    });

    it('PUT in a session makes the user the sender; the sender always sees it', async () => {
      m.fromU1 = await send(s1, { target_user_id: u2.id, messagetext: 'from u1 to u2' });
      m.fromU1Later = await send(s1, { target_user_id: u2.id, messagetext: 'later', date_range_start: addDays(formatDate(svc.clock.now()), 10) });
      const row = expectOk<Message[]>(await api.get(`messages/id=${m.fromU1}`))[0]!;
      assert.equal(row.sender_user_id, u1.id);
      assert.equal(row.sender!.id, u1.id);
      assert.equal(row.sender!.username, u1.username);
      assert.equal(row.target_user_id, u2.id);
      assert.equal(row.company_id, C);
      expectError(await s1.put('messages', { sender_user_id: u2.id, target_user_id: u2.id, messagetext: 'forged' }), 400,
        'Field verification failed, invalid field sender_user_id');
      const bossMessage = await send(sBoss, { messagetext: 'from the boss' });
      assert.equal(expectOk<Message[]>(await api.get(`messages/id=${bossMessage}`))[0]!.sender_user_id, boss.id);
      m.fromBoss = bossMessage;
    });

    it('a session sees messages to the user, to its company within the date range, and its own', async () => {
      const sorted = (...xs: number[]) => xs.sort((a, b) => a - b);
      assert.deepEqual(await ids(s1), sorted(m.toU1!, m.all!, m.today!, m.fromU1!, m.fromU1Later!, m.fromBoss!));
      assert.deepEqual(await ids(s2), sorted(m.toU2!, m.all!, m.today!, m.fromU1!, m.fromBoss!));
      assert.deepEqual(await ids(s3), sorted(m.child!, m.toU3!));
      assert.deepEqual(await ids(sBoss), sorted(m.all!, m.today!, m.fromBoss!));
      // Filters and counts see the same set.
      assert.deepEqual(await ids(s1, `messages/id=${m.toU2}`), []);
      assert.deepEqual(await ids(s1, 'messages/target_user_id=<NULL>'), sorted(m.all!, m.today!, m.fromBoss!));
      // The range is inclusive at both ends; move the clock day by day.
      await advanceDays(1);
      assert.deepEqual(await ids(s1), sorted(m.toU1!, m.soon!, m.all!, m.fromU1!, m.fromU1Later!, m.fromBoss!));
      await advanceDays(2);
      assert.deepEqual(await ids(s2), sorted(m.toU2!, m.soon!, m.all!, m.fromU1!, m.fromBoss!));
      await advanceDays(1);
      assert.deepEqual(await ids(s1), sorted(m.toU1!, m.all!, m.fromU1!, m.fromU1Later!, m.fromBoss!));
      await advanceDays(6);
      assert.deepEqual(await ids(s2), sorted(m.toU2!, m.all!, m.fromU1!, m.fromU1Later!, m.fromBoss!));
    });

    it('POST and DELETE in a session reach only the visible messages', async () => {
      assert.deepEqual(expectOk(await s1.post(`messages/id=${m.toU2}`, { message_read: 1 })), { records_updated: 0, records_found: 0 });
      assert.deepEqual(expectOk(await sBoss.delete(`messages/id=${m.toU2}`)), { records_deleted: 0, records_found: 0 });
      assert.deepEqual(expectOk(await sBoss.post(`messages/id=${m.toU1}`, { messagetext: 'x' })), { records_updated: 0, records_found: 0 });
      assert.equal(expectOk<Message[]>(await api.get(`messages/id=${m.toU2}`))[0]!.message_read, 0);
      expectError(await s1.post(`messages/id=${m.toU1}`, { messagetext: 'changed' }), 403, 'Access denied: POST on messages requires admin');
      expectError(await s1.delete(`messages/id=${m.toU1}`), 403, 'Access denied: DELETE on messages requires admin');
    });

    it('message_read of a message to the whole company is per user', async () => {
      const all = m.all!;
      assert.deepEqual([await readState(s1, all), await readState(s2, all), await readState(api, all)], [0, 0, 0]);
      assert.deepEqual(expectOk(await s1.post(`messages/id=${all}`, { message_read: 1 })), { records_updated: 1, records_found: 1 });
      assert.deepEqual(expectOk(await s1.post(`messages/id=${all}`, { message_read: 1 })), { records_updated: 0, records_found: 1 });
      assert.deepEqual([await readState(s1, all), await readState(s2, all), await readState(sBoss, all), await readState(api, all)], [1, 0, 0, 0]);
      assert.deepEqual(await ids(s1, 'messages/message_read=1'), [all]);
      assert.deepEqual(await ids(s2, 'messages/message_read=1'), []);
      expectOk(await s2.post(`messages/id=${all}`, { message_read: 1 }));
      expectOk(await sBoss.post(`messages/id=${all}`, { message_read: 1 }));
      // Every current recipient (the users of C) has read it: basic mode shows 1.
      assert.equal(await readState(api, all), 1);
      assert.deepEqual(expectOk(await s1.post(`messages/id=${all}`, { message_read: 0 })), { records_updated: 1, records_found: 1 });
      assert.deepEqual([await readState(s1, all), await readState(s2, all), await readState(sBoss, all), await readState(api, all)], [0, 1, 1, 0]);
      // A user of the child company is not a recipient and does not see it.
      assert.deepEqual(await ids(s3, `messages/id=${all}`), []);
    });

    it('message_read of a message to one user is that message\'s own flag', async () => {
      assert.deepEqual(expectOk(await s1.post(`messages/id=${m.toU1}`, { message_read: 1 })), { records_updated: 1, records_found: 1 });
      assert.equal(await readState(s1, m.toU1!), 1);
      assert.equal(await readState(api, m.toU1!), 1);
    });

    it('no password or token used above appears in the audit table or a response', async () => {
      await assertNoSecretsLeaked(svc);
    });
  });
}
