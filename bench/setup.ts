// What a run prepares: certificates, the PostgreSQL database, the seeded data.
import { sql } from 'kysely';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { prepareStore } from '../src/store.ts';
import { createSelfSigned } from '../src/tls/x509.ts';
import { BENCH_DIR, type Engine, PG_ADMIN_URL, PG_DATABASE, ROWS, say, SQLITE_DIR, TLS_FILES } from './config.ts';
import { checkBareTables, createBareTables } from './bare-tables.ts';
import { seedBench, type SeedSummary } from './seed.ts';

/** Empties .bench/ and writes the server's and the client's certificates; returns the client's PEM. */
export function writeCertificates(): string {
  rmSync(BENCH_DIR, { recursive: true, force: true });
  mkdirSync(dirname(TLS_FILES.serverCert), { recursive: true });
  const server = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'] });
  const client = createSelfSigned({ cn: 'bench client' });
  writeFileSync(TLS_FILES.serverCert, server.certPem);
  writeFileSync(TLS_FILES.serverKey, server.keyPem);
  writeFileSync(TLS_FILES.clientCert, client.certPem);
  writeFileSync(TLS_FILES.clientKey, client.keyPem);
  return client.certPem;
}

export const engineLabel = (engine: Engine) => (engine === 'postgres' ? 'PostgreSQL' : 'SQLite');

/** Where and how much to seed: by default the workloads' store, BENCH_ROWS assets over all companies (see SeedOptions for `due`). */
export interface SeedTarget {
  readonly dataDir: string; readonly assets: number; readonly companies?: number; readonly due?: boolean;
  /** Also the checks of W8 and W9 (seed-checks.ts). */
  readonly checks?: boolean;
}

/** Migrates, seeds and copies the bare tables; `url` undefined means SQLite under `target.dataDir` (.bench/sqlite). */
export async function seed(engine: Engine, url: string | undefined, certPem: string, today: string,
  target: SeedTarget = { dataDir: SQLITE_DIR, assets: ROWS }): Promise<SeedSummary> {
  const t0 = Date.now();
  const database = openDatabase({ url, dataDir: target.dataDir });
  try {
    await prepareStore(database);
    const summary = await seedBench(database, {
      engine, certPem, today, assets: target.assets, companies: target.companies, due: target.due, checks: target.checks,
    });
    await createBareTables(database, engine);
    const wrong = await checkBareTables(database, engine);
    if (wrong) throw new Error(`the bare tables: ${wrong}`);
    // What autovacuum soon does on a live PostgreSQL (statistics, visibility map); the service never runs ANALYZE on SQLite.
    if (engine === 'postgres') await sql`VACUUM ANALYZE`.execute(database.db);
    const made = target.due
      ? `, ${summary.dueTotal} of them due, no reminders made, a user taking reminders in each company,`
      : ` and ${summary.reminders.seeded} reminders (then the reminder job created ${summary.reminders.jobCreated} and delivered ${summary.reminders.jobDelivered}),`;
    const checks = summary.checks ? ` the ${summary.checks.historyChecks} checks of W9's asset, ${summary.checks.standards.length} standards' checks,` : '';
    say(`seeded ${summary.assetsTotal} assets${made}${checks} and the bare tables into ${engineLabel(engine)} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return summary;
  } finally {
    await database.close();
  }
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try { await client.query(text); } finally { await client.end(); }
}

/** Creates the (empty) benchmark database (or another of that server's, by name) on the PostgreSQL server; returns its URL. */
export async function createPgDatabase(name = PG_DATABASE): Promise<string> {
  await dropPgDatabase(name);
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export const dropPgDatabase = (name = PG_DATABASE): Promise<void> => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
