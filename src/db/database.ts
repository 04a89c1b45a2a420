import { Kysely, sql, type Transaction } from 'kysely';
import { join } from 'node:path';
import { listenPostgres } from './changes.ts';
import { openPostgres, postgresHooks } from './postgres.ts';
import { immediateTransaction, openSqlite, sqliteHooks } from './sqlite.ts';
import type { Database, Db, ReadRouting } from './database-types.ts';
import { openReadRouting, type ReplicaOptions } from './replica.ts';
import { bind, compiledQuery, type Statement, StatementCache, type Values } from './statements.ts';
import type { Tables } from './tables.ts';

export type { Database, Db, ReadRouting } from './database-types.ts';

export interface DatabaseOptions {
  /** postgres://… selects PostgreSQL; otherwise SQLite under dataDir. */
  readonly url?: string | undefined;
  readonly dataDir: string;
  readonly poolSize?: number;
  /** Compiled statement shapes kept (default 500). */
  readonly statementCacheSize?: number;
  /** Rebuild every cached statement on use and fail when its shape key was not enough (tests). */
  readonly verifyStatements?: boolean;
  /** A streaming replica for GET requests (PostgreSQL only). */
  readonly replica?: ReplicaOptions | undefined;
}

/** Runs a compiled statement on a connection or in a transaction. */
export async function execute<R>(db: Db, statement: Statement, values: Values): Promise<{ rows: R[]; changes: number }> {
  const r = await db.executeQuery<R>(compiledQuery(statement, values));
  return { rows: r.rows, changes: Number(r.numAffectedRows ?? 0) };
}

/** The embedded database's file: `sqlite:<file>`, or DATA_DIR/asset-tracker.sqlite. */
export const sqliteFile = (o: { url?: string | undefined; dataDir: string }): string =>
  (o.url?.startsWith('sqlite:') ? o.url.slice('sqlite:'.length) : join(o.dataDir, 'asset-tracker.sqlite'));

export function openDatabase(o: DatabaseOptions): Database {
  const cache = (db: Db) => new StatementCache(db as unknown as Kysely<unknown>, o.statementCacheSize ?? 500, o.verifyStatements);
  if (o.url && /^postgres(ql)?:\/\//.test(o.url)) {
    const postgres = openPostgres(o.url, o.poolSize);
    const db = new Kysely<Tables>({ dialect: postgres.dialect });
    const backgroundDb = new Kysely<Tables>({ dialect: postgres.background });
    const changes = listenPostgres(o.url);
    const statements = cache(db);
    const on = (kysely: Db, read: typeof postgres.read, close: () => Promise<void>): Database => ({
      db: kysely,
      hooks: postgresHooks,
      statements,
      shared: true,
      changes,
      dataVersion: null,
      read: (s, values) => read(s.text, bind(s, values)) as Promise<never[]>,
      transaction: (fn) => kysely.transaction().execute((trx: Transaction<Tables>) => fn(trx)),
      pool: postgres.stats,
      forBackground: () => background,
      close,
    });
    const background = on(backgroundDb, postgres.readBackground, async () => {});
    const primary = on(db, postgres.read, async () => {
      await reads?.close();
      await changes.close(); await backgroundDb.destroy(); await db.destroy();
    });
    const reads: ReadRouting | undefined = o.replica ? openReadRouting(primary, postgres.pool, o.replica) : undefined;
    return reads ? { ...primary, reads } : primary;
  }
  if (o.replica) throw new Error('a read replica needs PostgreSQL (DATABASE_URL=postgres://…); SQLite has none');
  const file = sqliteFile(o);
  const sqlite = openSqlite(file);
  const db = new Kysely<Tables>({ dialect: sqlite.dialect });
  const database: Database = {
    db,
    hooks: sqliteHooks,
    statements: cache(db),
    shared: false,
    changes: null,
    dataVersion: sqlite.dataVersion,
    read: async (s, values) => sqlite.read(s, bind(s, values)) as never[],
    transaction: (fn) => immediateTransaction(db, fn),
    pool: sqlite.stats,
    forBackground: () => database,
    close: async () => { await db.destroy(); await sqlite.close(); },
  };
  return database;
}

/** Throws unless the database answers (readiness). */
export async function ping(database: Database): Promise<void> {
  await sql`SELECT 1`.execute(database.db);
}
