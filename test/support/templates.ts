// Stores made once per test run, already migrated, that every test file's databases are
// copied from instead of migrating from scratch: a SQLite file, copied; a PostgreSQL
// database, the template of each `CREATE DATABASE … TEMPLATE`. test/run.ts makes them and
// names them in the environment; harness.ts uses them when they are named, and migrates
// a fresh store itself when they are not (a file run on its own).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, sqliteFile } from '../../src/db/database.ts';
import { prepareStore } from '../../src/store.ts';

export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

/** The SQLite template's file and the PostgreSQL template's name, when the run made them. */
export const TEMPLATES = { sqlite: process.env.TEST_SQLITE_TEMPLATE, postgres: process.env.TEST_PG_TEMPLATE };

export function pgUrl(database: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function pgAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export interface Templates {
  /** The variables that name the templates, for the test processes. */
  readonly env: Record<string, string>;
  dispose(): Promise<void>;
}

export async function makeTemplates(postgres: boolean): Promise<Templates> {
  const dir = mkdtempSync(join(tmpdir(), 'asset-tracker-template-'));
  const sqlite = openDatabase({ dataDir: dir });
  await prepareStore(sqlite);
  await sqlite.close();
  const file = sqliteFile({ dataDir: dir });
  if (existsSync(`${file}-wal`)) throw new Error(`the SQLite template kept a write-ahead log: ${file}-wal`);
  const env: Record<string, string> = { TEST_SQLITE_TEMPLATE: file };
  let name: string | undefined;
  if (postgres) {
    name = `asset_tracker_template_${process.pid}`;
    await pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await pgAdmin(`CREATE DATABASE ${name}`);
    const database = openDatabase({ url: pgUrl(name), dataDir: dir, poolSize: 1 });
    await prepareStore(database);
    await database.close();
    env.TEST_PG_TEMPLATE = name;
  }
  return {
    env,
    async dispose() {
      if (name) await pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
