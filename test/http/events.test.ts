// The outbox: every change to a resource writes its event in the same
// transaction, from the database itself — created, updated, deleted, the queue's
// released and rejected — with the record as GET shows it without embeds; a change
// that changes nothing, or that is refused, writes none; secrets never show.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { runReminders } from '../../src/jobs/reminders.ts';
import { addDays } from '../../src/model/dates.ts';
import { create, expectOk, one, stop, todayText } from './resources-support.ts';
import type { Inserted, PlaceFields, Updated } from '../support/api.ts';

interface EventRow { seq: number; event_id: string; event: string; endpoint: string; record_id: number; op: string; company_id: number; data: PlaceFields }

for (const kind of DB_KINDS) {
  describe(`event outbox (${kind})`, () => {
    let svc: Service;
    let api: TestClient;
    let top: number;

    before(async () => { ({ svc, top, api } = await buildTenancy(kind)); });
    after(() => stop(svc));

    const eventsAfter = async (seq: number): Promise<EventRow[]> => {
      const { rows } = await sql<Omit<EventRow, 'data'> & { data: string | PlaceFields }>`SELECT * FROM events WHERE seq > ${seq} ORDER BY seq`.execute(svc.database.db);
      return rows.map((r) => ({ ...r, seq: Number(r.seq), record_id: Number(r.record_id), company_id: Number(r.company_id),
        data: typeof r.data === 'string' ? JSON.parse(r.data) as PlaceFields : r.data }));
    };
    const last = async () => Number((await sql<{ s: number | null }>`SELECT MAX(seq) AS s FROM events`.execute(svc.database.db)).rows[0]?.s ?? 0);

    it('create, update and delete of a record: one event each, data as GET shows it without embeds', async () => {
      const mark = await last();
      const id = await create(api, 'locations', { description: 'Lab', data: { floor: 1 } });
      const created = await one(api, 'locations', id);
      expectOk(await api.post(`/3.0/locations/id=${id}`, { description: 'Lab 2' }));
      const updated = await one(api, 'locations', id);
      expectOk(await api.delete(`/3.0/locations/id=${id}`));
      const events = await eventsAfter(mark);
      assert.deepEqual(events.map((e) => [e.event, e.op, e.record_id, e.company_id]),
        [['locations.created', 'created', id, top], ['locations.updated', 'updated', id, top], ['locations.deleted', 'deleted', id, top]]);
      const { company: _c, ...plain } = created;
      assert.deepEqual(events[0]!.data, plain);
      const { company: _u, ...after } = updated;
      assert.deepEqual(events[1]!.data, after);
      assert.deepEqual(events[2]!.data, after);
      assert.match(events[0]!.event_id, /^evt_[0-9a-f]{24,32}$/);
      assert.equal(new Set(events.map((e) => e.event_id)).size, 3);
    });

    it('a POST over many records adds one event per changed record; one that changes nothing adds none', async () => {
      for (let i = 0; i < 5; i++) await create(api, 'departments', { description: `D${i}`, data: { batch: 'x' } });
      const mark = await last();
      const r = expectOk<Updated>(await api.post('/3.0/departments/data.batch=x', { data: { batch: 'y' } }));
      assert.equal(r.records_updated, 5);
      const events = await eventsAfter(mark);
      assert.equal(events.length, 5);
      assert.ok(events.every((e) => e.event === 'departments.updated' && e.data.data!.batch === 'y'));
      const mark2 = await last();
      expectOk(await api.post('/3.0/departments/data.batch=y', { data: { batch: 'y' } }));
      assert.deepEqual(await eventsAfter(mark2), []);
    });

    it('a refused write adds no event', async () => {
      const mark = await last();
      const r = await api.put('/3.0/locations', [{ description: 'ok' }, { description: 5 }]);
      assert.equal(r.status, 400);
      assert.deepEqual(await eventsAfter(mark), []);
    });

    it('users: no password hash; webhooks: no secret', async () => {
      const mark = await last();
      const user = await create(api, 'users', { username: `u${kind}`, email: 'u@example.com' });
      await svc.database.db.updateTable('users').set({ password_hash: 'x' } as never).where('id', '=', user).execute().catch(() => {});
      const hook = expectOk<Inserted>(await api.put('/3.0/webhooks', { url: 'https://example.com/hook', events: ['*'] }), 201);
      const events = await eventsAfter(mark);
      const text = JSON.stringify(events);
      assert.ok(!text.includes(hook.secrets![0]!) && !/password_hash|secret/.test(text), text);
      assert.deepEqual(events.map((e) => e.event), ['users.created', 'webhooks.created']);
    });

    it('the approval queue: released and rejected beside updated', async () => {
      const a = await create(api, 'assetqueue', { description: 'Scope', asset_no: `S-${kind}` });
      const b = await create(api, 'assetqueue', { description: 'Meter', asset_no: `M-${kind}` });
      const mark = await last();
      expectOk(await api.post(`/3.0/assetqueue/id=${a}`, { released: 1 }));
      expectOk(await api.post(`/3.0/assetqueue/id=${b}`, { released: 2 }));
      const names = (await eventsAfter(mark)).map((e) => `${e.event}:${e.record_id}`);
      assert.ok(names.includes(`assetqueue.released:${a}`) && names.includes(`assetqueue.rejected:${b}`), names.join(' '));
      assert.ok(names.some((n) => n.startsWith('assets.created:')), names.join(' '));
    });

    it('the reminder run: assets.due and assets.overdue once per asset and due date', async () => {
      const overdue = await create(api, 'assets', { asset_no: `O-${kind}`, next_check: addDays(todayText(svc), -1) });
      const due = await create(api, 'assets', { asset_no: `D-${kind}`, next_check: addDays(todayText(svc), 5) });
      await create(api, 'assets', { asset_no: `L-${kind}`, next_check: addDays(todayText(svc), 300) });
      const mark = await last();
      await runReminders(svc.database, svc.clock);
      const events = (await eventsAfter(mark)).filter((e) => e.event.startsWith('assets.'));
      assert.deepEqual(events.map((e) => [e.event, e.record_id]).sort(), [['assets.due', due], ['assets.overdue', overdue]].sort());
      const { files: _f, ...plain } = (({ company: _c, location: _l, department: _d, externaltype: _x, ...r }) => r)(await one(api, 'assets', due));
      assert.deepEqual(events.find((e) => e.record_id === due)!.data, plain);
      const mark2 = await last();
      await runReminders(svc.database, svc.clock);
      assert.deepEqual((await eventsAfter(mark2)).filter((e) => e.event.startsWith('assets.')), []);
    });
  });
}
