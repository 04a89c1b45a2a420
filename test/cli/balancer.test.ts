// Two `serve` processes on one PostgreSQL behind HAProxy, run from deploy/haproxy.cfg
// (TCP mode, TLS passed through, checks of /readyz, send-proxy-v2). Under a paced
// load of reads and keyed writes from 127.0.0.2:
// - a rolling restart (SIGTERM to each instance in turn, then a new one on its port)
//   fails no request, first tries included, and writes each asset once;
// - the audit shows the client's address (127.0.0.2), not the balancer's (127.0.0.1);
// - SIGKILL of one instance fails only what was under way on it, and each such
//   request's retry with its Idempotency-Key succeeds within 30 s, written once —
//   also keyed writes that had claimed their key on the killed instance.
// The machine is shared: the assertions are about failures, never about latency.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.ts';
import { haproxyMissing, PacedLoad, probe, Requester, type Sent, startBalancer } from '../support/balancer.ts';
import { DB_KINDS } from '../support/harness.ts';
import { prepareServe, type Served } from '../support/factories.ts';
import { freePort, openStageDatabase, Server, type Stage, withStage } from '../support/stage.ts';

const CLIENT = '127.0.0.2';
const DIRECT = '127.0.0.3';
const RATE = 120;
const RETRY_WITHIN_MS = 30_000;

interface Instance { server: Server; readonly port: number; readonly metrics: number }

async function startInstance(stage: Stage, s: Served, port: number, metrics: number): Promise<Server> {
  const server = await Server.start(stage, 'serve', { ...s.env, PORT: String(port), METRICS_PORT: String(metrics),
    BASE_URL: `https://localhost:${port}`, PROXY_PROTOCOL_FROM: '127.0.0.1', SHUTDOWN_DRAIN_MS: '5000', DB_POOL_SIZE: '5' });
  const deadline = Date.now() + 60_000;
  while ((await probe(metrics, '/readyz'))?.status !== 200) {
    if (Date.now() > deadline) assert.fail(`instance on ${port} not ready\n${server.stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return server;
}

/** Sends again, with the same key, until the answer is a success; how long after `since` that was. */
async function retried(load: PacedLoad, entry: Sent, since: number): Promise<number> {
  for (;;) {
    try {
      const r = await load.attempt(entry);
      if (r.status === 200 || r.status === 201) return Date.now() - since;
    } catch { /* the connection failed: try again */ }
    if (Date.now() - since > RETRY_WITHIN_MS) assert.fail(`request ${entry.id} (${entry.method} ${entry.key}) still failing ${RETRY_WITHIN_MS} ms after the kill`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Every asset a keyed PUT of the load created exists once; none of the load's PUTs is missing. */
async function writtenOnce(database: Database, prefix: string, puts: readonly Sent[]): Promise<void> {
  const { rows } = await sql<{ asset_no: string; n: string }>`SELECT asset_no, COUNT(*) AS n FROM assets
    WHERE asset_no LIKE ${`${prefix}-%`} GROUP BY asset_no`.execute(database.db);
  assert.deepEqual(rows.filter((r) => Number(r.n) !== 1), [], 'assets written twice');
  assert.deepEqual(new Set(rows.map((r) => r.asset_no)), new Set(puts.map((p) => p.key)));
}

describe('two instances behind HAProxy', { skip: !DB_KINDS.includes('postgres') ? 'PostgreSQL not reachable' : haproxyMissing }, () => {
  it('a rolling restart fails no request; killing one fails only what it was serving, and keyed retries then succeed once', async () => {
    await withStage('postgres', async (stage) => {
      const s = await prepareServe(stage, 'balanced');
      const caFile = join(stage.dir, 'server.pem');
      const ports = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
      const instances: Instance[] = [];
      const database = openStageDatabase(stage);
      const requester = new Requester(ports[4], s.serverPem, s.cert, CLIENT);
      let balancer: Awaited<ReturnType<typeof startBalancer>> | null = null;
      try {
        for (const [port, metrics] of [[ports[0], ports[1]], [ports[2], ports[3]]] as const) {
          instances.push({ port, metrics, server: await startInstance(stage, s, port, metrics) });
        }
        balancer = await startBalancer(stage.dir, { port: ports[4], servers: instances.map((i) => i.port), caFile });
        for (const name of ['app1', 'app2']) await balancer.waitFor(name, 'UP');

        // A rolling restart under load.
        const rolling = new PacedLoad(requester, 'roll', RATE);
        const rollStarted = Date.now();
        rolling.start();
        await new Promise((r) => setTimeout(r, 1000));
        for (const [n, instance] of instances.entries()) {
          instance.server.signal('SIGTERM');
          await new Promise((r) => setTimeout(r, 300));
          assert.deepEqual(await probe(instance.metrics, '/readyz'), { status: 503, body: { status: 'unavailable', reason: 'shutting down' } });
          assert.deepEqual(await probe(instance.metrics, '/healthz'), { status: 200, body: { status: 'ok' } });
          await balancer.waitFor(`app${n + 1}`, 'DOWN');
          assert.deepEqual(await instance.server.exitStatus, { code: 0, signal: null }, instance.server.stderr);
          instance.server = await startInstance(stage, s, instance.port, instance.metrics);
          await balancer.waitFor(`app${n + 1}`, 'UP');
        }
        await new Promise((r) => setTimeout(r, 1000));
        await rolling.stop();
        const rollSeconds = (Date.now() - rollStarted) / 1000;
        const rollPuts = rolling.sent.filter((e) => e.method === 'PUT');
        console.log(`rolling restart: ${rolling.sent.length} requests (${rollPuts.length} keyed writes) in ${rollSeconds.toFixed(1)} s, `
          + `${rolling.failed.length} failed`);
        assert.deepEqual(rolling.failed.map((f) => `${f.id} ${f.method} ${f.status ?? f.error}`), [], 'failed requests during the rolling restart');
        assert.ok(rolling.sent.length >= RATE * 10, `only ${rolling.sent.length} requests sent`);
        await writtenOnce(database, 'roll', rollPuts);

        // The audit shows the client's address, as the PROXY header gave it.
        const { rows: addresses } = await sql<{ ip: string | null }>`SELECT DISTINCT a.ip FROM auditlog a JOIN assets r ON r.id = a.record_id
          WHERE a.endpoint = 'assets' AND r.asset_no LIKE 'roll-%'`.execute(database.db);
        assert.deepEqual(addresses.map((r) => r.ip), [CLIENT]);

        // SIGKILL under load, with large keyed writes under way on the instance killed (sent to it directly).
        const victim = instances[0]!;
        const direct = new Requester(victim.port, s.serverPem, s.cert, DIRECT, 4);
        const bigKeys = ['big-1', 'big-2', 'big-3'];
        const bigBody = (key: string) => JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ asset_no: `${key}-${i}`, description: 'x'.repeat(200) })));
        const big = bigKeys.map((key) => direct.send('PUT', '/3.0/assets', bigBody(key), { 'idempotency-key': key }).then((r) => r.status, () => 'failed'));
        const killing = new PacedLoad(requester, 'kill', RATE);
        killing.start();
        // Kill once a large write holds its claim unanswered on the victim.
        const claimDeadline = Date.now() + 20_000;
        for (;;) {
          const { rows } = await sql<{ n: string }>`SELECT COUNT(*) AS n FROM idempotency_keys WHERE ${sql.ref('key')} LIKE 'big-%' AND status IS NULL`.execute(database.db);
          if (Number(rows[0]!.n) > 0) break;
          if (Date.now() > claimDeadline) assert.fail('no large write ever held its claim');
          await new Promise((r) => setTimeout(r, 5));
        }
        const inFlight = killing.inFlight;
        const killedAt = Date.now();
        victim.server.signal('SIGKILL');
        const bigStatuses = await Promise.all(big);
        direct.close();
        await new Promise((r) => setTimeout(r, 4000));
        await killing.stop();
        const failed = killing.failed;
        console.log(`kill -9: ${killing.sent.length} requests, ${failed.length} failed (${inFlight} in flight at the kill); large writes: ${bigStatuses.join(', ')}`);
        assert.ok(failed.length <= inFlight + 8, `${failed.length} failed, more than the ${inFlight} under way and one per open connection`);
        assert.ok(failed.every((f) => f.startedAt <= killedAt + 2000), 'requests sent after the balancer noticed the kill failed');
        assert.ok(bigStatuses.includes('failed'), 'a large write was cut by the kill');

        // Each failed request, retried with its key, succeeds within 30 s of the kill, and is written once.
        const retries = failed.map((f) => retried(killing, f, killedAt));
        const bigRetries = bigKeys.map((key) => retried(killing, { id: -1, method: 'PUT', key, body: bigBody(key), startedAt: killedAt }, killedAt)
          .catch(() => assert.fail(`the large write ${key} was not written within 30 s`)));
        const times = await Promise.all([...retries, ...bigRetries]);
        console.log(`retries after the kill succeeded within ${Math.max(0, ...times)} ms`);
        await writtenOnce(database, 'kill', killing.sent.filter((e) => e.method === 'PUT'));
        for (const key of bigKeys) {
          const { rows } = await sql<{ n: string; distinct: string }>`SELECT COUNT(*) AS n, COUNT(DISTINCT asset_no) AS distinct FROM assets
            WHERE asset_no LIKE ${`${key}-%`}`.execute(database.db);
          assert.deepEqual([Number(rows[0]!.n), Number(rows[0]!.distinct)], [1000, 1000], `${key} written once`);
        }
      } finally {
        requester.close();
        await balancer?.stop();
        await database.close();
        for (const i of instances) await i.server.dispose();
      }
    });
  });
});
