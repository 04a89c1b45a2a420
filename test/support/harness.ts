// Starts the real service over real HTTPS on a fresh database of either engine.
// The same tests run against SQLite and against the machine's PostgreSQL.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { addClient, addCompany, type ClientInfo } from '../../src/admin/accounts.ts';
import { buildApp, type App, type AppOptions } from '../../src/app.ts';
import { type Database, openDatabase, sqliteFile } from '../../src/db/database.ts';
import { prepareStore } from '../../src/store.ts';
import type { Clock } from '../../src/model/dates.ts';
import { createSelfSigned } from '../../src/tls/x509.ts';
import { selfSigned, type TestCert } from './certs.ts';
import { TestClient } from './client.ts';
import { PG_ADMIN_URL, pgAdmin, pgUrl, TEMPLATES } from './templates.ts';

export type DbKind = 'sqlite' | 'postgres';

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Both engines, or SQLite alone with a loud notice (a failure when REQUIRE_POSTGRES=1, as in CI).
 * TEST_ENGINES=sqlite asks for the SQLite half alone (CI's runs on the other Node lines).
 */
export const DB_KINDS: readonly DbKind[] = await (async () => {
  if (process.env.TEST_ENGINES === 'sqlite') return ['sqlite'] as const;
  if (await postgresReachable()) return ['sqlite', 'postgres'] as const;
  const notice = `PostgreSQL is not reachable at ${PG_ADMIN_URL}: the PostgreSQL half of the suite is SKIPPED`;
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(notice);
  process.emitWarning(`\n${'!'.repeat(72)}\n${notice}\n${'!'.repeat(72)}`);
  return ['sqlite'] as const;
})();

export interface FreshDatabase {
  readonly database: Database;
  readonly url: string | undefined;
  /** Another handle on the same store, as a second instance or the operator's CLI would open it. */
  reopen(): Database;
  drop(): Promise<void>;
}

/** A store of its own, copied from the run's migrated template when there is one (test/run.ts), else migrated here. */
export async function freshDatabase(kind: DbKind): Promise<FreshDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'asset-tracker-test-'));
    if (TEMPLATES.sqlite) copyFileSync(TEMPLATES.sqlite, sqliteFile({ dataDir: dir }));
    const database = openDatabase({ dataDir: dir, verifyStatements: true });
    await prepareStore(database);
    return {
      database, url: undefined, reopen: () => openDatabase({ dataDir: dir }),
      async drop() { await database.close(); rmSync(dir, { recursive: true, force: true }); },
    };
  }
  const name = `asset_tracker_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await pgAdmin(TEMPLATES.postgres ? `CREATE DATABASE ${name} TEMPLATE ${TEMPLATES.postgres}` : `CREATE DATABASE ${name}`);
  const url = pgUrl(name);
  const database = openDatabase({ url, dataDir: tmpdir(), poolSize: 5, verifyStatements: true });
  await prepareStore(database);
  return {
    database, url, reopen: () => openDatabase({ url, dataDir: tmpdir(), poolSize: 2 }),
    async drop() {
      await database.close();
      await pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** A clock the tests move by hand. */
export class TestClock implements Clock {
  constructor(private t = Date.now()) {}
  now(): Date { return new Date(this.t); }
  advance(ms: number): void { this.t += ms; }
  set(d: Date): void { this.t = d.getTime(); }
}

export const SERVER_CERT = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'] });

export interface Service {
  readonly kind: DbKind;
  readonly database: Database;
  readonly app: App;
  readonly port: number;
  readonly clock: TestClock;
  readonly baseUrl: string;
  /** Another handle on the service's store (a second instance, the operator's CLI); the caller closes it. */
  reopen(): Database;
  /** A client presenting `cert` (or no certificate). */
  client(cert?: TestCert | null): TestClient;
  company(name: string, parent?: number | null): Promise<number>;
  /** A new self-signed certificate registered to the company, and a client using it. */
  certificate(companyId: number, o?: { impersonation?: boolean }): Promise<{ cert: TestCert; info: ClientInfo; client: TestClient }>;
  close(): Promise<void>;
}

export async function startService(kind: DbKind, options: Partial<AppOptions> = {}): Promise<Service> {
  const fresh = await freshDatabase(kind);
  const clock = new TestClock();
  const baseUrl = 'https://localhost:8443';
  const app = await buildApp({ database: fresh.database, clock, tls: { key: SERVER_CERT.keyPem, cert: SERVER_CERT.certPem },
    baseUrl, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent', ...options });
  await new Promise<void>((r) => app.https.listen(0, '127.0.0.1', () => r()));
  const address = app.https.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const clients: TestClient[] = [];
  const client = (cert?: TestCert | null) => {
    const c = new TestClient(port, SERVER_CERT.certPem, cert);
    clients.push(c);
    return c;
  };
  return {
    kind, database: fresh.database, app, port, clock, baseUrl, client, reopen: () => fresh.reopen(),
    company: (name, parent = null) => addCompany(fresh.database, name, parent),
    async certificate(companyId, o = {}) {
      const cert = selfSigned(`client-${companyId}-${Math.random().toString(36).slice(2, 6)}`);
      const info = await addClient(fresh.database, { companyId, certPem: cert.certPem, impersonation: !!o.impersonation });
      return { cert, info, client: client(cert) };
    },
    async close() {
      for (const c of clients) c.close();
      // The harness listened on the HTTPS server itself, so it also closes it.
      app.https.closeAllConnections();
      await new Promise<void>((r) => app.https.close(() => r()));
      await app.fastify.close();
      await fresh.drop();
    },
  };
}
