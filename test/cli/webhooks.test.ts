// Webhooks end to end: a running `serve` delivers to real HTTPS receivers
// on 127.0.0.1 (their certificates trusted through NODE_EXTRA_CA_CERTS, the address
// rule lifted by WEBHOOK_ALLOW_PRIVATE): every event family arrives, signed so that
// both header sets verify (the Standard Webhooks library checks its own); the
// secret is shown once; a webhook hears only its company's tree; failures are
// retried on schedule and after Retry-After; 410 switches a webhook off; a rotated
// secret signs beside the old one; a receiver whose certificate is not trusted is
// never delivered to.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { expectOk } from '../support/api.ts';
import type { TestClient } from '../support/client.ts';
import { buildCertificate, buildCompany, buildServerTls, startServe, withStore } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { type Delivery, Receiver } from '../support/receiver.ts';
import { createStage, runCli, type Server, show, type Stage } from '../support/stage.ts';
import type { AuditEntry, Inserted, WebhookDelivery, WebhookRecord } from '../support/api.ts';

/** Both signatures of a delivery hold for `secret` (X-Signature by hand, webhook-signature by the Standard Webhooks library). */
function verify(d: Delivery, secret: string): void {
  const ts = String(d.headers['x-webhook-timestamp']);
  const mine = `sha256=${createHmac('sha256', secret).update(`${ts}.${d.body}`).digest('hex')}`;
  assert.ok(String(d.headers['x-signature']).split(' ').includes(mine), `X-Signature ${String(d.headers['x-signature'])} lacks ${mine}`);
  assert.equal(d.headers['webhook-timestamp'], ts);
  assert.equal(d.headers['webhook-id'], d.json.id);
  new Webhook(secret).verify(d.body, {
    'webhook-id': String(d.headers['webhook-id']), 'webhook-timestamp': ts, 'webhook-signature': String(d.headers['webhook-signature']),
  });
}

/** A date `days` from today (UTC). */
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

for (const kind of DB_KINDS) {
  describe(`webhooks over HTTPS (${kind})`, () => {
    let stage: Stage;
    let server: Server;
    let top: number, child: number, sibling: number;
    let api: TestClient, other: TestClient;
    let main: Receiver, aside: Receiver, untrusted: Receiver;
    let hookId: number, secret: string;

    before(async () => {
      stage = await createStage(kind);
      [main, aside, untrusted] = await Promise.all([Receiver.start(), Receiver.start(), Receiver.start()]);
      const trust = join(stage.dir, 'receivers.pem');
      writeFileSync(trust, main.certPem + aside.certPem);
      const certs = await withStore(stage, async (database) => {
        top = await buildCompany(database, 'Top');
        child = await buildCompany(database, 'Child', top);
        sibling = await buildCompany(database, 'Sibling');
        return [await buildCertificate(database, top, 'top'), await buildCertificate(database, sibling, 'sibling')];
      });
      server = await startServe(stage, { env: {
        ...buildServerTls(stage).env, RATE_LIMIT: '0', NODE_EXTRA_CA_CERTS: trust, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT: '1s',
      } });
      api = server.client(certs[0]);
      other = server.client(certs[1]);
    });
    after(async () => {
      api?.close();
      other?.close();
      await server?.dispose();
      await Promise.all([main, aside, untrusted].map((r) => r?.close()));
      await stage?.dispose();
    });

    it('registration: https only, known events, the secret once (never in GET), basic mode or admin only', async () => {
      const bad = [
        [{ url: 'http://localhost/x', events: ['*'] }, 'Field verification failed, invalid value for url'],
        [{ url: 'https://user:pw@localhost/x', events: ['*'] }, 'Field verification failed, invalid value for url'],
        [{ url: main.url(), events: ['assets.nope'] }, 'Field verification failed, invalid value for events'],
        [{ url: main.url(), events: [] }, 'Field verification failed, invalid value for events'],
        [{ url: main.url(), events: ['*'], secret: 'mine' }, 'Field verification failed, invalid field secret'],
      ] as const;
      for (const [body, message] of bad) {
        const r = await api.put('/3.0/webhooks', body);
        assert.equal(r.status, 400, r.text);
        assert.equal(r.errorReply.error, message);
      }
      const created = expectOk<Inserted>(await api.put('/3.0/webhooks', { url: main.url(), events: ['*'], data: { team: 'erp' } }), 201);
      assert.deepEqual(Object.keys(created), ['records_inserted', 'ids', 'secrets']);
      [hookId] = created.ids as [number];
      [secret] = created.secrets as [string];
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      const [hook] = expectOk<WebhookRecord[]>(await api.get(`/3.0/webhooks/id=${hookId}`));
      assert.deepEqual(Object.keys(hook!), ['id', 'company_id', 'url', 'events', 'active', 'data', 'created', 'modified', 'version']);
      assert.deepEqual([hook!.company_id, hook!.url, hook!.events, hook!.active], [top, main.url(), ['*'], 1]);
      assert.ok(!JSON.stringify(await api.get('/3.0/auditlog')).includes(secret));
      expectOk(await other.put('/3.0/webhooks', { url: aside.url(), events: ['*'] }), 201);
      assert.deepEqual(expectOk<WebhookRecord[]>(await other.get('/3.0/webhooks')).map((h) => h.company_id), [sibling]);
    });

    it('every event family arrives with both signatures; a sibling company hears nothing of it', async () => {
      const loc = expectOk<Inserted>(await api.put('/3.0/locations', { description: 'Lab', company_id: child }), 201).ids[0];
      expectOk(await api.put('/3.0/departments', { description: 'QA' }), 201);
      const type = expectOk<Inserted>(await api.put('/3.0/externaltypes', { description: 'Scope', external_itemtype_id: 7 }), 201).ids[0];
      const asset = expectOk<Inserted>(await api.put('/3.0/assets', { asset_no: 'A-1', next_check: '2000-01-01' }), 201).ids[0];
      const due = expectOk<Inserted>(await api.put('/3.0/assets', { asset_no: 'A-2', next_check: inDays(5) }), 201).ids[0];
      const [q1, q2] = expectOk<Inserted>(await api.put('/3.0/assetqueue', [{ description: 'In', asset_no: 'Q-1' }, { description: 'Out', asset_no: 'Q-2' }]), 201).ids;
      expectOk(await api.post(`/3.0/assetqueue/id=${q1}`, { released: 1 }));
      expectOk(await api.post(`/3.0/assetqueue/id=${q2}`, { released: 2 }));
      expectOk(await api.put('/3.0/assetreminders', { asset_id: asset, due_date: '2000-01-01', remind_date: '1999-12-01' }), 201);
      expectOk(await api.put('/3.0/files', { asset_id: asset, description: 'certificate' }), 201);
      expectOk(await api.put('/3.0/messages', { messagetext: 'hello' }), 201);
      expectOk(await api.put('/3.0/users', { username: `hook-${kind}`, email: 'h@example.com' }), 201);
      expectOk(await api.put('/3.0/companies', { name: 'Grandchild', parent_id: child }), 201);
      expectOk(await api.post(`/3.0/locations/id=${loc}`, { description: 'Lab 2' }));
      expectOk(await api.post(`/3.0/webhooks/id=${hookId}`, { data: { team: 'erp', v: 2 } }));
      expectOk(await api.delete(`/3.0/externaltypes/id=${type}`));
      const reminders = await runCli(['reminders', 'run'], stage.env({}));
      assert.equal(reminders.code, 0, show(reminders));
      const expected = ['locations.created', 'locations.updated', 'departments.created', 'externaltypes.created', 'externaltypes.deleted',
        'assets.created', 'assetqueue.created', 'assetqueue.updated', 'assetqueue.released', 'assetqueue.rejected', 'assetreminders.created',
        'files.created', 'messages.created', 'users.created', 'companies.created', 'webhooks.updated', 'assets.overdue', 'assets.due'];
      await main.until((ds) => expected.every((e) => ds.some((d) => d.json.event === e)), 15_000);
      for (const d of main.deliveries) {
        assert.deepEqual(Object.keys(d.json), ['id', 'event', 'timestamp', 'company_id', 'data']);
        assert.equal(d.headers['content-type'], 'application/json');
        verify(d, secret);
      }
      assert.ok(main.deliveries.every((d) => d.json.company_id !== sibling));
      assert.equal(main.of('assets.due', due).length, 1);
      assert.equal(main.of('locations.created', loc)[0]!.json.company_id, child);
      assert.ok(!JSON.stringify(main.deliveries.map((d) => d.json)).includes('whsec_'));
      assert.ok(aside.deliveries.every((d) => d.json.company_id === sibling), 'the sibling heard only its own company');
    });

    it('under no load, the first attempt arrives within 1 s of the commit', async () => {
      for (let i = 0; i < 10; i++) {
        // Timed from before the request, so the figure is an upper bound of commit to delivery.
        const sent = Date.now();
        const id = expectOk<Inserted>(await api.put('/3.0/messages', { messagetext: `prompt ${i}` }), 201).ids[0];
        await main.until(() => main.of('messages.created', id).length > 0, 5_000);
        const waited = main.of('messages.created', id)[0]!.at - sent;
        assert.ok(waited < 1000, `message ${id} delivered ${waited} ms after the request`);
      }
    });

    it('a failure is retried: after a 500 at about 5 s, after a Retry-After of 1 s sooner, after a timeout too', async () => {
      const hook = expectOk<Inserted>(await api.put('/3.0/webhooks', { url: main.url('/retry'), events: ['departments.created'] }), 201).ids[0];
      for (const [answer, least, most] of [[{ status: 500 }, 4000, 8000], [{ status: 503, headers: { 'retry-after': '1' } }, 800, 3500],
        ['hang', 4000, 9000]] as const) {
        main.answer('/retry', answer);
        const id = expectOk<Inserted>(await api.put('/3.0/departments', { description: `retry ${JSON.stringify(answer)}` }), 201).ids[0];
        const tries = () => main.of('departments.created', id).filter((d) => d.path === '/retry');
        await main.until(() => tries().length === 2, 15_000);
        const [first, second] = tries();
        assert.equal(first!.json.id, second!.json.id, 'the event keeps its id');
        const gap = second!.at - first!.at;
        assert.ok(gap >= least && gap <= most, `retried after ${gap} ms`);
      }
      const log = expectOk<WebhookDelivery[]>(await api.get(`/3.0/webhookdeliveries/webhook_id=${hook}`));
      assert.deepEqual(log.map((l) => [l.attempt, l.status, l.response_status]), [[2, 'delivered', 200], [2, 'delivered', 200], [2, 'delivered', 200]]);
      assert.deepEqual(Object.keys(log[0]!), ['id', 'webhook_id', 'company_id', 'event_id', 'event', 'attempt', 'status', 'response_status', 'error', 'created', 'next_attempt']);
      expectOk(await api.delete(`/3.0/webhooks/id=${hook}`));
    });

    it('a rotated secret signs beside the old one', async () => {
      const r = await runCli(['webhooks', 'rotate', String(hookId), '--json'], stage.env({}));
      assert.equal(r.code, 0, show(r));
      const rotated = (JSON.parse(r.stdout) as { secret: string }).secret;
      assert.notEqual(rotated, secret);
      const id = expectOk<Inserted>(await api.put('/3.0/departments', { description: 'after rotation' }), 201).ids[0];
      await main.until(() => main.of('departments.created', id).length === 1);
      const [d] = main.of('departments.created', id);
      assert.equal(String(d!.headers['x-signature']).split(' ').length, 2);
      assert.equal(String(d!.headers['webhook-signature']).split(' ').length, 2);
      verify(d!, rotated);
      verify(d!, secret);
      secret = rotated;
    });

    it('a receiver whose certificate is not trusted is never delivered to', async () => {
      const hook = expectOk<Inserted>(await api.put('/3.0/webhooks', { url: untrusted.url(), events: ['departments.created'] }), 201).ids[0];
      const id = expectOk<Inserted>(await api.put('/3.0/departments', { description: 'untrusted' }), 201).ids[0];
      await main.until(() => main.of('departments.created', id).length === 1);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(untrusted.deliveries.length, 0);
      const [log] = expectOk<WebhookDelivery[]>(await api.get(`/3.0/webhookdeliveries/webhook_id=${hook}`));
      assert.equal(log!.status, 'retrying');
      assert.match(String(log!.error), /certificate/);
      expectOk(await api.delete(`/3.0/webhooks/id=${hook}`));
    });

    it('410 Gone switches the webhook off, audited; nothing more is delivered to it', async () => {
      const hook = expectOk<Inserted>(await api.put('/3.0/webhooks', { url: main.url('/gone'), events: ['departments.created'] }), 201).ids[0];
      main.answer('/gone', { status: 410 });
      const id = expectOk<Inserted>(await api.put('/3.0/departments', { description: 'gone' }), 201).ids[0];
      const gone = () => main.deliveries.filter((d) => d.path === '/gone');
      await main.until(() => gone().length === 1);
      assert.equal(gone()[0]!.json.data.id, id);
      for (let i = 0; i < 50 && expectOk<WebhookRecord[]>(await api.get(`/3.0/webhooks/id=${hook}`))[0]!.active === 1; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(expectOk<WebhookRecord[]>(await api.get(`/3.0/webhooks/id=${hook}`))[0]!.active, 0);
      const audit = expectOk<AuditEntry[]>(await api.get(`/3.0/auditlog/endpoint=webhooks/record_id=${hook}/action=update`));
      assert.ok(audit.some((a) => a.newdata?.active === 0), JSON.stringify(audit));
      expectOk(await api.put('/3.0/departments', { description: 'unheard' }), 201);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(gone().length, 1);
    });

    it("a failed standard's check arrives as assetchecks.failed with the checks and assets that relied on it", async () => {
      const [own] = expectOk<Inserted>(await api.put('/3.0/webhooks', { url: main.url('/checks'), events: ['assetchecks.failed'] }), 201).secrets!;
      const [standard, a, b] = expectOk<Inserted>(await api.put('/3.0/assets', [{ asset_no: 'S-1' }, { asset_no: 'C-1' }, { asset_no: 'C-2', company_id: child }]), 201).ids;
      const used = [
        expectOk<Inserted>(await api.put('/3.0/assetchecks', { asset_id: a, check_date: '2026-01-05', result: 'pass', standard_ids: [standard] }), 201).ids[0],
        expectOk<Inserted>(await api.put('/3.0/assetchecks', { asset_id: b, check_date: '2026-01-06', result: 'pass', standard_ids: [standard] }), 201).ids[0],
      ];
      const failed = expectOk<Inserted>(await api.put('/3.0/assetchecks', { asset_id: standard, check_date: '2026-01-07', result: 'fail' }), 201).ids[0];
      await main.until(() => main.of('assetchecks.failed', failed).length > 0, 10_000);
      const [d] = main.of('assetchecks.failed', failed);
      verify(d!, own!);
      assert.equal(d!.path, '/checks');
      const data = d!.json.data as { result?: string; impacted_check_ids?: number[]; impacted_asset_ids?: number[] };
      assert.deepEqual([data.result, data.impacted_check_ids, data.impacted_asset_ids], ['fail', used, [a, b]]);
      assert.ok(main.deliveries.filter((x) => x.path === '/checks').every((x) => x.json.event === 'assetchecks.failed'));
    });
  });
}
