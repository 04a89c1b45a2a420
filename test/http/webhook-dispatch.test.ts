// The dispatcher's bookkeeping, in process and without a receiver: an
// attempt the address rule refuses is recorded and retried; a webhook that has
// failed for 24 hours is switched off, audited; `redeliver` queues an event again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { AdminError } from '../../src/admin/accounts.ts';
import { formatDatetime } from '../../src/model/dates.ts';
import { redeliver } from '../../src/admin/webhooks.ts';
import { Dispatcher } from '../../src/webhooks/dispatcher.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { create, expectOk, one, start, stop } from './resources-support.ts';
import type { AuditEntry, Inserted, WebhookDelivery } from '../support/api.ts';

for (const kind of DB_KINDS) {
  describe(`webhook dispatcher bookkeeping (${kind})`, () => {
    let svc: Service;
    let api: TestClient;
    let hook: number;
    let dispatcher: Dispatcher;

    before(async () => {
      svc = await start(kind);
      api = (await svc.certificate(await svc.company('Top'))).client;
      // Loopback: the address rule refuses every attempt before any connection is made.
      hook = expectOk<Inserted>(await api.put('/3.0/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['departments.created'] }), 201).ids[0]!;
      dispatcher = new Dispatcher(svc.database, { allowPrivate: false, clock: svc.clock });
    });
    after(() => stop(svc));

    const deliveries = async () => expectOk<WebhookDelivery[]>(await api.get(`/3.0/webhookdeliveries/webhook_id=${hook}`));

    it('a refused address is a failed attempt, retried on the schedule', async () => {
      await create(api, 'departments', { description: 'first' });
      assert.deepEqual(await dispatcher.pass(), { queued: 1, attempted: 1 });
      const [d] = await deliveries();
      assert.deepEqual([d!.event, d!.attempt, d!.status, d!.response_status], ['departments.created', 1, 'retrying', null]);
      assert.match(String(d!.error), /^address 127\.0\.0\.1 of 127\.0\.0\.1 refused \(loopback\)$/);
      const wait = Date.parse(`${d!.next_attempt!.replace(' ', 'T')}Z`) - svc.clock.now().getTime();
      assert.ok(wait >= 4000 && wait <= 7000, `next attempt in ${wait} ms`);
      assert.deepEqual(await dispatcher.pass(), { queued: 0, attempted: 0 });
      assert.equal(await dispatcher.backlog(), 1);
    });

    it('failing for 24 hours switches the webhook off, audited', async () => {
      const db = svc.database.db;
      const longAgo = formatDatetime(new Date(svc.clock.now().getTime() - 25 * 3600_000));
      await sql`UPDATE webhooks SET failing_since = ${longAgo} WHERE id = ${hook}`.execute(db);
      await sql`UPDATE webhook_deliveries SET next_attempt = ${formatDatetime(svc.clock.now())}`.execute(db);
      assert.equal((await dispatcher.pass()).attempted, 1);
      assert.equal((await one(api, 'webhooks', hook)).active, 0);
      const audit = expectOk<AuditEntry[]>(await api.get(`/3.0/auditlog/endpoint=webhooks/record_id=${hook}/action=update`));
      assert.ok(audit.some((a) => a.newdata?.active === 0), JSON.stringify(audit));
      await create(api, 'departments', { description: 'unheard' });
      assert.deepEqual(await dispatcher.pass(), { queued: 0, attempted: 0 });
    });

    it('redeliver queues the event again for the webhooks that had it; an unknown event is refused', async () => {
      const [d] = await deliveries();
      await sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt = NULL`.execute(svc.database.db);
      assert.equal(await redeliver(svc.database, d!.event_id, svc.clock), 1);
      const [again] = await deliveries();
      assert.deepEqual([again!.status, again!.next_attempt, again!.attempt], ['pending', formatDatetime(svc.clock.now()), d!.attempt]);
      await assert.rejects(redeliver(svc.database, 'evt_nope', svc.clock), AdminError);
    });
  });
}
