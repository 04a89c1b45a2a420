// The schema of a store as plain lines, read from the engine's own catalogue, so that
// two stores can be compared: every table and column, index, constraint, trigger and
// function, with its definition, and the migrations recorded as applied.
import BetterSqlite3 from '../../src/db/better-sqlite3.ts';
import { join } from 'node:path';
import pg from 'pg';

export interface StoreLocation {
  /** postgres://… for PostgreSQL; otherwise SQLite in dataDir. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
}

export interface Schema {
  /** One line per object: kind, name, definition. */
  readonly objects: string[];
  /** Names in kysely_migration, sorted. */
  readonly applied: string[];
}

/** Bookkeeping of Kysely's Migrator that the runner no longer uses; present only in stores it made. */
const IGNORED = new Set(['kysely_migration_lock']);

export async function readSchema(store: StoreLocation): Promise<Schema> {
  return store.databaseUrl ? readPostgres(store.databaseUrl) : readSqlite(join(store.dataDir, 'asset-tracker.sqlite'));
}

function readSqlite(file: string): Schema {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'
      ORDER BY type, name`).all() as { type: string; name: string; tbl_name: string; sql: string | null }[];
    const objects = rows.filter((r) => !IGNORED.has(r.tbl_name)).map((r) => `${r.type} ${r.name} on ${r.tbl_name}: ${r.sql ?? '(automatic)'}`);
    const hasTable = rows.some((r) => r.type === 'table' && r.name === 'kysely_migration');
    const applied = hasTable ? (db.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as { name: string }[]).map((r) => r.name) : [];
    return { objects, applied };
  } finally {
    db.close();
  }
}

async function readPostgres(url: string): Promise<Schema> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const lines = async (kind: string, text: string) =>
      (await client.query<{ line: string }>(text)).rows.map((r) => `${kind} ${r.line}`);
    const objects = [
      ...await lines('column', `SELECT concat_ws(' ', table_name, ordinal_position, column_name, data_type, is_nullable,
          column_default, collation_name, is_identity, identity_generation) AS line
        FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`),
      ...await lines('table', `SELECT concat_ws(' ', c.relname, c.relkind, c.relpersistence) AS line FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S', 'v', 'm') ORDER BY c.relname`),
      ...await lines('index', `SELECT concat_ws(' ', tablename, indexname, indexdef) AS line FROM pg_indexes
        WHERE schemaname = 'public' ORDER BY indexname`),
      ...await lines('constraint', `SELECT concat_ws(' ', conrelid::regclass::text, conname, pg_get_constraintdef(oid)) AS line
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY conrelid::regclass::text, conname`),
      ...await lines('trigger', `SELECT concat_ws(' ', tgrelid::regclass::text, tgname, pg_get_triggerdef(oid)) AS line
        FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgrelid::regclass::text, tgname`),
      ...await lines('function', `SELECT concat_ws(' ', proname, pg_get_functiondef(oid)) AS line
        FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY proname`),
    ].filter((line) => ![...IGNORED].some((name) => line.includes(name)));
    const present = (await client.query<{ present: boolean }>(`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`)).rows[0]?.present === true;
    const applied = present ? (await client.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name')).rows.map((r) => r.name) : [];
    return { objects, applied };
  } finally {
    await client.end();
  }
}
