import { Kysely, sql, type Transaction } from 'kysely';
import { join } from 'node:path';
import type { SqlDialect } from './dialect.ts';
import { openPostgres, postgresHooks } from './postgres.ts';
import { openSqlite, sqliteHooks } from './sqlite.ts';
import type { Tables } from './tables.ts';

export type Db = Kysely<Tables>;

export interface Database {
  readonly db: Db;
  readonly hooks: SqlDialect;
  /** Runs `fn` in one transaction (SQLite: BEGIN IMMEDIATE, so writers queue instead of failing). */
  transaction<T>(fn: (trx: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres://… selects PostgreSQL; otherwise SQLite under dataDir. */
  readonly url?: string | undefined;
  readonly dataDir: string;
  readonly poolSize?: number;
}

export function openDatabase(o: DatabaseOptions): Database {
  if (o.url && /^postgres(ql)?:\/\//.test(o.url)) {
    const dialect = openPostgres(o.url, o.poolSize);
    const db = new Kysely<Tables>({ dialect });
    return {
      db,
      hooks: postgresHooks,
      transaction: (fn) => db.transaction().execute((trx: Transaction<Tables>) => fn(trx)),
      close: () => db.destroy(),
    };
  }
  const file = o.url?.startsWith('sqlite:') ? o.url.slice('sqlite:'.length) : join(o.dataDir, 'asset-tracker.sqlite');
  const dialect = openSqlite(file);
  const db = new Kysely<Tables>({ dialect });
  return {
    db,
    hooks: sqliteHooks,
    transaction: (fn) => db.connection().execute(async (conn) => {
      await sql`BEGIN IMMEDIATE`.execute(conn);
      try {
        const result = await fn(conn);
        await sql`COMMIT`.execute(conn);
        return result;
      } catch (error) {
        await sql`ROLLBACK`.execute(conn);
        throw error;
      }
    }),
    close: () => db.destroy(),
  };
}

/** Throws unless the database answers (readiness). */
export async function ping(database: Database): Promise<void> {
  await sql`SELECT 1`.execute(database.db);
}
