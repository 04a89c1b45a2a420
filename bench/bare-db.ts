// The bare writes' connection to the store (bare-writes.ts, bare-check.ts): one
// connection, statements with $n placeholders prepared once (better-sqlite3
// `prepare`; pg named statements), and transactions begun and ended by hand. SQLite
// is opened as the service opens it (src/db/sqlite.ts); its statements run
// synchronously, BEGIN IMMEDIATE to COMMIT, as db.transaction would.
import BetterSqlite3 from '../src/db/better-sqlite3.ts';
import pg from 'pg';
import type { Engine } from './config.ts';
import { isPostgresUrl, pgTypes } from './bare-driver.ts';

export type Value = string | number | null;

export interface BareDb {
  readonly engine: Engine;
  /** Runs a statement; its rows (none for a write without RETURNING). */
  readonly query: <T>(text: string, values: readonly Value[]) => Promise<T[]>;
  readonly transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  readonly close: () => Promise<void>;
}

/** BEGIN, `fn`, COMMIT — or ROLLBACK when it throws. */
async function inTransaction<T>(exec: (text: string) => unknown, begin: string, fn: () => Promise<T>): Promise<T> {
  await exec(begin);
  try {
    const out = await fn();
    await exec('COMMIT');
    return out;
  } catch (error) {
    await exec('ROLLBACK');
    throw error;
  }
}

function openSqlite(file: string): BareDb {
  const db = new BetterSqlite3(file, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  const statements = new Map<string, BetterSqlite3.Statement>();
  const query = async <T>(text: string, values: readonly Value[]): Promise<T[]> => {
    let s = statements.get(text);
    if (!s) statements.set(text, (s = db.prepare(text.replace(/\$\d+/g, '?'))));
    return s.reader ? s.all([...values]) as T[] : (s.run([...values]), []);
  };
  return {
    engine: 'sqlite', query, transaction: (fn) => inTransaction((t) => db.exec(t), 'BEGIN IMMEDIATE', fn), close: async () => { db.close(); },
  };
}

async function openPostgres(url: string): Promise<BareDb> {
  const client = new pg.Client({ connectionString: url, types: pgTypes });
  await client.connect();
  const names = new Map<string, string>();
  const query = async <T>(text: string, values: readonly Value[]): Promise<T[]> => {
    let name = names.get(text);
    if (!name) names.set(text, (name = `bare_write_${names.size}`));
    return (await client.query({ name, text, values: [...values] })).rows as T[];
  };
  return { engine: 'postgres', query, transaction: (fn) => inTransaction((t) => client.query(t), 'BEGIN', fn), close: () => client.end() };
}

/** PostgreSQL when `url` is a postgres:// URL, else the SQLite file. */
export const openBareDb = (url: string | undefined, sqliteFile: string): Promise<BareDb> =>
  (url && isPostgresUrl(url) ? openPostgres(url) : Promise.resolve(openSqlite(sqliteFile)));
