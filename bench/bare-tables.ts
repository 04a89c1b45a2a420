// The bare baselines' tables: plain copies of `assets`, `auditlog`, `assetchecks` and
// `assetcheck_standards` — the same columns, the same indexes, no triggers and no
// foreign keys — named bare_<table>, made after seeding. bare_assets and the checks'
// copies hold the same rows as their tables; bare_auditlog starts empty. The bare
// UPDATE, the bare INSERT (bare-writes.ts) and the bare check (bare-check.ts) write to
// them, so that a baseline pays for the rows, their indexes and their audit rows, and
// not for the service's triggers (asset tallies, events, versions).
import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import type { Engine } from './config.ts';

const TABLES = ['assets', 'auditlog', 'assetchecks', 'assetcheck_standards'] as const;
/** The copied tables, with their rows. */
const COPIED = ['assets', 'assetchecks', 'assetcheck_standards'] as const;
/** The tables with an id of their own (a sequence on PostgreSQL). */
const WITH_IDS = ['assets', 'auditlog', 'assetchecks'] as const;

/** A statement of the service's schema made about `bare_<table>` instead. */
const renamed = (text: string, table: string) => text.replaceAll(`"${table}`, `"bare_${table}`);

/** SQLite: the tables' own CREATE statements without their REFERENCES clauses, then their indexes. */
async function createSqlite(database: Database): Promise<void> {
  for (const table of TABLES) {
    const { rows } = await sql<{ type: string; sql: string }>`SELECT type, sql FROM sqlite_master
      WHERE tbl_name = ${table} AND type IN ('table', 'index') AND sql IS NOT NULL ORDER BY type = 'index', name`.execute(database.db);
    await sql.raw(`DROP TABLE IF EXISTS "bare_${table}"`).execute(database.db);
    for (const r of rows) {
      const text = r.type === 'table' ? r.sql.replace(/ references "\w+" \("\w+"\)/gi, '') : r.sql;
      await sql.raw(renamed(text, table)).execute(database.db);
    }
  }
}

/** PostgreSQL: LIKE … INCLUDING ALL copies columns, defaults, identity (a sequence of its own) and indexes; never triggers or foreign keys. */
async function createPostgres(database: Database): Promise<void> {
  for (const table of TABLES) {
    await sql.raw(`DROP TABLE IF EXISTS bare_${table}`).execute(database.db);
    await sql.raw(`CREATE TABLE bare_${table} (LIKE ${table} INCLUDING ALL)`).execute(database.db);
  }
}

/** Creates the bare tables and copies the rows of assets and of the checks into theirs, in the order they were seeded. */
export async function createBareTables(database: Database, engine: Engine): Promise<void> {
  await (engine === 'postgres' ? createPostgres(database) : createSqlite(database));
  for (const table of COPIED) {
    await sql.raw(`INSERT INTO bare_${table} SELECT * FROM ${table} ORDER BY ${table === 'assetcheck_standards' ? 'check_id, position' : 'id'}`).execute(database.db);
  }
  if (engine === 'postgres') {
    for (const table of WITH_IDS) {
      await sql.raw(`SELECT setval(pg_get_serial_sequence('bare_${table}', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM bare_${table}`).execute(database.db);
    }
  }
  // SQLite's AUTOINCREMENT counter follows the largest id inserted by itself.
}

/** Whether the copy holds the same rows as assets (count and id range), and no trigger is on the bare tables. */
export async function checkBareTables(database: Database, engine: Engine): Promise<string | null> {
  const { rows } = await sql<{ n: number; lo: number | null; hi: number | null; bn: number; blo: number | null; bhi: number | null }>`SELECT
    (SELECT COUNT(*) FROM assets) AS n, (SELECT MIN(id) FROM assets) AS lo, (SELECT MAX(id) FROM assets) AS hi,
    (SELECT COUNT(*) FROM bare_assets) AS bn, (SELECT MIN(id) FROM bare_assets) AS blo, (SELECT MAX(id) FROM bare_assets) AS bhi`.execute(database.db);
  const r = rows[0]!;
  if (Number(r.n) !== Number(r.bn) || Number(r.lo) !== Number(r.blo) || Number(r.hi) !== Number(r.bhi)) return `bare_assets holds ${r.bn} rows, assets ${r.n}`;
  const triggers = engine === 'postgres'
    ? sql<{ n: number }>`SELECT COUNT(*) AS n FROM pg_trigger WHERE tgrelid IN (${sql.join(TABLES.map((t) => sql`CAST(${`bare_${t}`} AS regclass)`))})`
    : sql<{ n: number }>`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN (${sql.join(TABLES.map((t) => `bare_${t}`))})`;
  const n = Number((await triggers.execute(database.db)).rows[0]!.n);
  return n === 0 ? null : `${n} triggers on the bare tables`;
}
