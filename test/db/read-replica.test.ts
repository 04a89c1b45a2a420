// GET requests read a real streaming replica (DATABASE_READ_URL) when it has replayed
// every write of the caller, else the primary: a caller never reads older data than it
// wrote, another caller reads the replica meanwhile, and a replica that is stopped or
// lags more than READ_MAX_LAG sends reads to the primary without an error.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { tmpdir } from 'node:os';
import { addClient, addCompany } from '../../src/admin/accounts.ts';
import { buildApp, type App } from '../../src/app.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { dbReads } from '../../src/metrics.ts';
import { redisReadPositions } from '../../src/db/redis-positions.ts';
import type { ReadPositionsFactory } from '../../src/db/replica.ts';
import { createSelfSigned } from '../../src/tls/x509.ts';
import { expectOk, type Inserted, type Place } from '../support/api.ts';
import { selfSigned } from '../support/certs.ts';
import { TestClient } from '../support/client.ts';
import { DB_KINDS, freshDatabase, type FreshDatabase, TestClock } from '../support/harness.ts';
import { useReplica, type TestReplica } from '../support/replica.ts';
import { eventually } from '../support/wait.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SERVER = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'] });

/** Statements run for GET requests so far, by pool. */
async function reads(): Promise<{ primary: number; replica: number }> {
  const values = (await dbReads.get()).values;
  const of = (pool: string) => values.find((v) => v.labels.pool === pool)?.value ?? 0;
  return { primary: of('primary'), replica: of('replica') };
}

/** Runs `fn` and says which pools served the GET statements it caused. */
async function served(fn: () => Promise<void>): Promise<{ primary: number; replica: number }> {
  const before = await reads();
  await fn();
  const now = await reads();
  return { primary: now.primary - before.primary, replica: now.replica - before.replica };
}

describe('a read replica on SQLite', () => {
  it('is refused when the store is opened', () => {
    assert.throws(() => openDatabase({ dataDir: tmpdir(), replica: { url: 'postgres://127.0.0.1:5433/x', maxLagMs: 5000, poolSize: 1 } }),
      /a read replica needs PostgreSQL/);
  });
});

if (DB_KINDS.includes('postgres')) {
  describe('reads from a streaming replica (postgres)', () => {
    let replica: TestReplica | null;
    let fresh: FreshDatabase;
    let database: string;
    const apps: { app: App; store: Database; clients: TestClient[] }[] = [];

    /** A service whose GETs may read the replica, with this READ_MAX_LAG; `a` and `b` are two certificates of one company. */
    async function service(maxLagMs: number, positions?: ReadPositionsFactory) {
      const store = openDatabase({ url: fresh.url, dataDir: tmpdir(), poolSize: 4,
        replica: { url: replica!.url(database), maxLagMs, poolSize: 3, checkEveryMs: 100, positions } });
      const app = await buildApp({ database: store, clock: new TestClock(), tls: { key: SERVER.keyPem, cert: SERVER.certPem },
        baseUrl: 'https://localhost:8443', logLevel: 'silent' });
      await new Promise<void>((r) => app.https.listen(0, '127.0.0.1', () => r()));
      const address = app.https.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const clients: TestClient[] = [];
      apps.push({ app, store, clients });
      return {
        client(cert: ReturnType<typeof selfSigned>) { const c = new TestClient(port, SERVER.certPem, cert); clients.push(c); return c; },
      };
    }

    /** Waits until the replica has replayed everything the primary has written so far. */
    async function caughtUp(): Promise<void> {
      // A commit record first: the primary's position then ends a record the replica replays (after a WAL switch and
      // nothing since, the primary's position is the next segment's start, which no replay reaches).
      await primaryQuery('SELECT txid_current()');
      const lsn = (await primaryQuery<{ lsn: string }>('SELECT CAST(pg_current_wal_lsn() - \'0/0\' AS text) AS lsn'))[0]!.lsn;
      const replayed = await eventually(async () => Number((await replica!.query<{ r: string }>(
        'SELECT CAST(pg_last_wal_replay_lsn() - \'0/0\' AS text) AS r'))[0]!.r), (r) => r >= Number(lsn), 60_000);
      assert.ok(replayed >= Number(lsn), `the replica caught up (replayed ${replayed}, primary at ${lsn})`);
      // The service learns of it at its next check (every 100 ms here).
      await new Promise((r) => setTimeout(r, 300));
    }
    let primaryQuery: <R>(text: string) => Promise<R[]>;

    const certA = selfSigned('replica-a');
    const certB = selfSigned('replica-b');
    let company: number;

    before(async () => {
      replica = await useReplica();
      if (!replica) return;
      fresh = await freshDatabase('postgres');
      database = new URL(fresh.url!).pathname.slice(1);
      primaryQuery = async <R>(text: string) => (await fresh.database.read<R>({ key: 'raw', text, params: [] }, {}));
      company = await addCompany(fresh.database, 'Replicated', null);
      await addClient(fresh.database, { companyId: company, certPem: certA.certPem, impersonation: false });
      await addClient(fresh.database, { companyId: company, certPem: certB.certPem, impersonation: false });
      await caughtUp();
    });

    after(async () => {
      for (const { app, store, clients } of apps) {
        for (const c of clients) c.close();
        app.https.closeAllConnections();
        await new Promise<void>((r) => app.https.close(() => r()));
        await app.fastify.close();
        await store.close();
      }
      await replica?.query('SELECT pg_wal_replay_resume()').catch(() => {});
      await fresh?.drop();
      await replica?.release();
    });

    const descriptions = async (api: TestClient) => expectOk<Place[]>(await api.get('/3.0/departments')).map((d) => d.description).sort();

    it('a caller reads its own write from the primary while the replica is paused; another caller reads the replica', async (t) => {
      if (!replica) { t.skip('no replica'); return; }
      const svc = await service(60_000);
      const a = svc.client(certA);
      const b = svc.client(certB);
      await caughtUp();
      const idle = await served(async () => { assert.deepEqual(await descriptions(a), []); assert.deepEqual(await descriptions(b), []); });
      assert.deepEqual(idle.primary, 0, 'callers with nothing pending read the replica');
      assert.ok(idle.replica >= 2);

      await replica.query('SELECT pg_wal_replay_pause()');
      expectOk<Inserted>(await a.put('/3.0/departments', { description: 'Paused lab' }), 201);
      const own = await served(async () => assert.deepEqual(await descriptions(a), ['Paused lab'], 'its own write, at once'));
      assert.equal(own.replica, 0, 'read from the primary');
      assert.ok(own.primary >= 1);
      const other = await served(async () => assert.deepEqual(await descriptions(b), [], 'the replica has not replayed it'));
      assert.equal(other.primary, 0, 'read from the replica');
      assert.ok(other.replica >= 1);
      // The change feed always reads the primary.
      const feed = await served(async () => { expectOk(await b.get('/3.0/changes')); });
      assert.equal(feed.replica, 0);

      await replica.query('SELECT pg_wal_replay_resume()');
      await caughtUp();
      const both = await served(async () => {
        assert.deepEqual(await descriptions(a), ['Paused lab']);
        assert.deepEqual(await descriptions(b), ['Paused lab']);
      });
      assert.equal(both.primary, 0, 'both read the replica once it replayed the write');
    });

    it('with the positions in Redis (REDIS_URL), a caller still reads its own write at once', async (t) => {
      if (!replica) { t.skip('no replica'); return; }
      let positions: ReadPositionsFactory;
      try {
        positions = await redisReadPositions(REDIS_URL, () => {});
      } catch {
        t.skip(`no Redis at ${REDIS_URL}`);
        return;
      }
      const svc = await service(60_000, positions);
      const a = svc.client(certA);
      const b = svc.client(certB);
      await caughtUp();
      await replica.query('SELECT pg_wal_replay_pause()');
      try {
        expectOk<Inserted>(await a.put('/3.0/departments', { description: 'Redis lab' }), 201);
        const own = await served(async () => assert.ok((await descriptions(a)).includes('Redis lab')));
        assert.equal(own.replica, 0, 'read from the primary');
        const other = await served(async () => assert.ok(!(await descriptions(b)).includes('Redis lab')));
        assert.equal(other.primary, 0, 'read from the replica');
      } finally {
        await replica.query('SELECT pg_wal_replay_resume()');
      }
    });

    it('a replica lagging more than READ_MAX_LAG sends every read to the primary, and gets them back once it catches up', async (t) => {
      if (!replica) { t.skip('no replica'); return; }
      const svc = await service(1000);
      const b = svc.client(certB);
      const a = svc.client(certA);
      await caughtUp();
      await replica.query('SELECT pg_wal_replay_pause()');
      try {
        // Written by the operator, not by b: only the lag can send b's reads to the primary.
        await primaryQuery(`INSERT INTO departments (company_id, description, creationdate, modified) VALUES (${company}, 'Lagging lab', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`);
        await new Promise((r) => setTimeout(r, 1600));
        const lagging = await served(async () => assert.ok((await descriptions(b)).includes('Lagging lab'), 'b reads the primary'));
        assert.equal(lagging.replica, 0);
      } finally {
        await replica.query('SELECT pg_wal_replay_resume()');
      }
      await caughtUp();
      const back = await served(async () => { await descriptions(a); await descriptions(b); });
      assert.equal(back.primary, 0, 'back on the replica');
    });

    it('a stopped replica: every GET is still answered, from the primary, and the replica serves again once it is back', async (t) => {
      if (!replica?.controllable) { t.skip('the replica is not this machine\'s to stop'); return; }
      const svc = await service(60_000);
      const a = svc.client(certA);
      const b = svc.client(certB);
      await caughtUp();
      await replica.stop();
      try {
        // The first read may still be sent to the replica: it fails to connect and is run on the primary.
        const down = await served(async () => {
          for (let i = 0; i < 5; i++) { await descriptions(a); await descriptions(b); }
        });
        assert.equal(down.replica, 0);
        assert.ok(down.primary >= 10);
      } finally {
        await replica.start();
      }
      await caughtUp();
      await new Promise((r) => setTimeout(r, 500));
      const back = await served(async () => { await descriptions(a); await descriptions(b); });
      assert.equal(back.primary, 0, 'back on the replica');
    });
  });
}
