// Bulk writes of the benchmark seed, as fast as each engine takes them: on SQLite
// multi-row INSERTs of 1000 rows, several per transaction; on PostgreSQL one
// INSERT … SELECT FROM unnest(arrays) per chunk. Reminders are made by one
// INSERT … SELECT over the assets.
import { type Generated, sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import { addDays } from '../src/model/dates.ts';
import type { Engine } from './config.ts';

type Described = { id: Generated<number>; company_id: number; description: string; data: string | null; modified: string };
// Type aliases, not interfaces: withTables<T> needs an index-signature-compatible type.
export type BenchTables = {
  locations: Described & { creationdate: string };
  departments: Described & { creationdate: string };
  externaltypes: Described & { external_itemtype_id: number };
  assets: { id: Generated<number> } & AssetRow;
};

export type AssetRow = {
  company_id: number; asset_no: string; serial_no: string; description: string; status: string;
  next_check: string | null; last_check: string | null; period: number | null; location_id: number | null;
  department_id: number | null; external_type_id: number | null; date_added: string; data: string | null; modified: string;
};

/** PostgreSQL type of each asset column, for the unnest arrays. */
const PG_TYPES: Readonly<Record<keyof AssetRow, string>> = {
  company_id: 'bigint', asset_no: 'text', serial_no: 'text', description: 'text', status: 'text', next_check: 'text', last_check: 'text',
  period: 'bigint', location_id: 'bigint', department_id: 'bigint', external_type_id: 'bigint', date_added: 'text', data: 'json', modified: 'text',
};
const COLUMNS = Object.keys(PG_TYPES) as (keyof AssetRow)[];
const SQLITE_STATEMENT_ROWS = 1000;

/** Inserts one chunk of assets in one transaction. */
export async function insertAssets(database: Database, engine: Engine, rows: readonly AssetRow[]): Promise<void> {
  if (engine === 'postgres') {
    const arrays = COLUMNS.map((c) => sql`CAST(${rows.map((r) => r[c])} AS ${sql.raw(PG_TYPES[c])}[])`);
    await sql`INSERT INTO assets (${sql.join(COLUMNS.map((c) => sql.ref(c)))}) SELECT * FROM unnest(${sql.join(arrays)})`.execute(database.db);
    return;
  }
  await database.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += SQLITE_STATEMENT_ROWS) {
      await trx.withTables<BenchTables>().insertInto('assets').values(rows.slice(i, i + SQLITE_STATEMENT_ROWS)).execute();
    }
  });
}

/**
 * What the reminder job (src/jobs/reminders.ts: 30-day window, retired assets
 * excluded) would long have left on a live service: one reminder per due asset,
 * delivered once its remind date passed. Written in bulk because the job's own
 * first run over 100k assets takes tens of seconds (and on SQLite holds the one
 * connection meanwhile); the real job then runs once to top up any difference.
 */
export async function insertReminders(database: Database, engine: Engine, today: string): Promise<number> {
  const remind = engine === 'postgres' ? sql`to_char(CAST(next_check AS date) - 30, 'YYYY-MM-DD')` : sql`date(next_check, '-30 days')`;
  const r = await sql`INSERT INTO assetreminders (company_id, asset_id, user_id, due_date, remind_date, message, sent, acknowledged, data)
    SELECT company_id, id, NULL, next_check, ${remind},
      CASE WHEN next_check < ${today} THEN 'Overdue' ELSE 'Due' END || ': check of asset ' || asset_no || ' (' || description || ') on ' || next_check,
      CASE WHEN ${remind} <= ${today} THEN 1 ELSE 0 END, 0, NULL
    FROM assets WHERE next_check IS NOT NULL AND next_check <= ${addDays(today, 30)} AND status <> 'Retired' ORDER BY id`.execute(database.db);
  return Number(r.numAffectedRows ?? 0);
}
