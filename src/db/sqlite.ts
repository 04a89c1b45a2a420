import BetterSqlite3 from './better-sqlite3.ts';
import { type Dialect, type Kysely, sql } from 'kysely';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Sql, SqlDialect } from '../model/dialect.ts';
import { concatObject, errorCode } from './dialect.ts';
import type { PoolStats } from '../metrics.ts';
import { Lru } from '../model/lru.ts';
import { measuredDialect } from './measured-driver.ts';
import { sqliteEventTriggers, sqliteInsertEvents } from './sqlite-events.ts';
import { writerDialect } from './sqlite-writer.ts';

const pathOf = (keys: readonly string[]) => `$${keys.map((k) => `."${k}"`).join('')}`;

export const sqliteHooks: SqlDialect = {
  kind: 'sqlite',
  json(column, keys) {
    const path = pathOf(keys);
    const type = sql`json_type(${column}, ${path})`;
    return {
      kind: sql`(CASE ${type} WHEN 'integer' THEN 'number' WHEN 'real' THEN 'number' WHEN 'text' THEN 'string'
        WHEN 'true' THEN 'boolean' WHEN 'false' THEN 'boolean' WHEN 'null' THEN 'null'
        WHEN 'object' THEN 'container' WHEN 'array' THEN 'container' END)`,
      text: sql`(CASE ${type} WHEN 'text' THEN json_extract(${column}, ${path}) WHEN 'null' THEN NULL ELSE (${column} -> ${path}) END)`,
      number: sql`(CASE WHEN ${type} IN ('integer', 'real') THEN json_extract(${column}, ${path}) END)`,
    };
  },
  jsonEntries: (column) => ({
    join: sql`CROSS JOIN json_each(CASE WHEN json_type(${column}) = 'object' THEN ${column} ELSE '{}' END) AS k`,
    key: sql`k.key`,
    kind: sql`(CASE k.type WHEN 'integer' THEN 'number' WHEN 'real' THEN 'number' WHEN 'text' THEN 'string' WHEN 'true' THEN 'boolean'
      WHEN 'false' THEN 'boolean' WHEN 'null' THEN 'null' ELSE 'container' END)`,
    text: sql`(CASE WHEN k.type IN ('object', 'array') THEN NULL ELSE CAST(k.value AS TEXT) END)`,
  }),
  jsonValue: (type, expr) => (type === 'int' || type === 'bool' ? sql`COALESCE(CAST(${expr} AS TEXT), 'null')`
    : type === 'json' ? sql`COALESCE(${expr}, 'null')` : sql`json_quote(${expr})`),
  // Concatenation: SQLite's own JSON functions would re-render stored JSON text.
  jsonObject: (members) => concatObject(members, sqliteHooks.jsonValue),
  jsonObjectText: (members) => sqliteHooks.jsonObject(members),
  jsonArrayText: (item, from, order) => sql`('[' || COALESCE((SELECT group_concat(${item}, ',' ORDER BY ${order}) ${from}), '') || ']')`,
  inIds: (expr, ids) => sql`${expr} IN (SELECT value FROM json_each(${ids}))`,
  inTexts: (expr, texts) => sqliteHooks.inIds(expr, texts),
  idList: (ids) => JSON.stringify(ids),
  // `WHERE true`: an INSERT … SELECT with ON CONFLICT needs a WHERE, or SQLite's parser reads ON as a join's.
  // jsonb_each gives each row as a JSONB array, whose members `->>` reads without parsing text again: a 1,000-row
  // INSERT of 14 columns took 3.5 ms instead of 6.3 with json_each and json_extract (VALUES with placeholders: 3.3).
  selectRows: (rows, types) => sql`SELECT ${sql.join(types.map((_t, i) => sql`r.value ->> ${sql.lit(i)}`))}
    FROM jsonb_each(${rows}) AS r WHERE true ORDER BY r.key`,
  rowList: (rows) => JSON.stringify(rows),
  inSubquery: (expr, subquery) => sql`${expr} IN (${subquery})`,
  rowKey: sql`rowid`,
  differs: (a, b) => sql`(${a} IS NOT ${b})`,
  dateText: (y, m, d) => sql`printf('%04d-%02d-%02d', ${y}, ${m}, ${d})`,
  cast: (value) => sql`${value}`,
  number: (text) => sql`CAST(${text} AS REAL)`,
  text: (expr) => sql`CAST(${expr} AS TEXT)`,
  bytewise: (expr) => expr,
  // Not LIKE: it takes U+FFFD, U+FFFE and U+FFFF for one another. lower() folds ASCII only.
  contains: (expr, needle) => sql`(instr(lower(${expr}), lower(${needle})) > 0)`,
  writesAlone: true,
  idWalk: (index) => (index ? sql`INDEXED BY ${sql.id(index)}` : sql`NOT INDEXED`),
  lockMatched: sql``,
  lockFor: () => sql`SELECT 1`,
  skipLocked: sql``,
  plansPerExecution: sql`SELECT 1`,
  eventTriggers: (table) => sqliteEventTriggers(sqliteHooks, table),
  insertEvents: (table, kind, from, extra) => sqliteInsertEvents(sqliteHooks, table, kind, from, extra),
  isUniqueViolation: (e) => errorCode(e) === 'SQLITE_CONSTRAINT_UNIQUE' || errorCode(e) === 'SQLITE_CONSTRAINT_PRIMARYKEY',
  isForeignKeyViolation: (e) => errorCode(e) === 'SQLITE_CONSTRAINT_FOREIGNKEY',
  isTransient: (e) => errorCode(e) === 'SQLITE_BUSY',
};

/** Statements prepared on one connection, kept by their text (better-sqlite3 statements are reusable). */
function preparing(raw: BetterSqlite3.Database, max = 500) {
  const cache = new Lru<string, BetterSqlite3.Statement>(max);
  return (text: string) => {
    let stmt = cache.get(text);
    if (!stmt) cache.set(text, (stmt = raw.prepare(text)));
    return stmt;
  };
}

export interface SqliteConnections {
  /** The writer, on a thread of its own behind Kysely (which lends it to one transaction at a time). */
  readonly dialect: Dialect;
  /** The writer's queue, for the metrics. */
  readonly stats: () => PoolStats;
  /**
   * Reads outside transactions, on this thread and a connection of their own: WAL
   * lets them see what is committed while a write transaction is open on the writer.
   */
  readonly read: (statement: { readonly text: string }, params: readonly unknown[]) => unknown[];
  /** Changes whenever any connection — this process's writer or another process — commits (PRAGMA data_version on the reader). */
  readonly dataVersion: () => number;
  /** Closes the writer thread and the reader (Kysely's destroy first: it closes what it used). */
  readonly close: () => Promise<void>;
}

/**
 * Reads share one read transaction per turn of the event loop. Each transaction a
 * WAL reader begins costs two lock calls and a stat of the file, and a system call
 * is dear (about as dear as the read itself); a request reads two or three times
 * (the data version, its count and its page), and a busy turn serves a dozen
 * requests. The snapshot ends when the turn does (setImmediate), and as the result
 * of each writer statement arrives: what this process commits, every later read
 * sees; another process's commit is seen from the next turn on.
 */
class ReadSnapshot {
  private open = false;
  private readonly begin: BetterSqlite3.Statement;
  private readonly commit: BetterSqlite3.Statement;
  readonly end = (): void => {
    if (!this.open) return;
    this.open = false;
    if (this.reader.inTransaction) this.commit.run();
  };

  constructor(private readonly reader: BetterSqlite3.Database) {
    this.begin = reader.prepare('BEGIN');
    this.commit = reader.prepare('COMMIT');
  }

  /** Makes sure the turn's snapshot is open (the next read runs in it). */
  enter(): void {
    if (this.open) return;
    this.begin.run();
    this.open = true;
    setImmediate(this.end);
  }
}

/**
 * Opens the embedded database: WAL, synchronous=FULL, foreign keys on;
 * the writer on its own thread (sqlite-writer.ts), the reader on this one.
 */
export function openSqlite(file: string): SqliteConnections {
  if (file === ':memory:') throw new Error('the embedded database needs a file (WAL readers open it a second time)');
  mkdirSync(dirname(file), { recursive: true });
  // The file exists, in WAL mode, before the reader opens it (the writer thread opens it in its own time).
  const init = new BetterSqlite3(file);
  init.pragma('journal_mode = WAL');
  init.close();
  const reader = new BetterSqlite3(file, { readonly: true });
  reader.pragma('busy_timeout = 5000');
  const snapshot = new ReadSnapshot(reader);
  const prepareRead = preparing(reader);
  // The reader closes with the writer.
  const writer = writerDialect(file, { afterEach: snapshot.end, beforeClose: () => { snapshot.end(); reader.close(); } });
  const measured = measuredDialect(writer.dialect, 'sqlite', 1);
  const version = reader.prepare('PRAGMA data_version').pluck();
  // A compiled statement keeps its prepared one while it lives (no look-up by its text on every read).
  const prepared = new WeakMap<object, BetterSqlite3.Statement>();
  const preparedFor = (s: { readonly text: string }) => {
    let stmt = prepared.get(s);
    if (!stmt) prepared.set(s, (stmt = prepareRead(s.text)));
    return stmt;
  };
  return {
    dialect: measured.dialect, stats: measured.stats,
    read: (s, params) => { const stmt = preparedFor(s); snapshot.enter(); return stmt.all(params); },
    dataVersion: () => { snapshot.enter(); return version.get() as number; },
    close: writer.close,
  };
}

/**
 * Runs `fn` in one transaction on Kysely's one SQLite connection, reserved for it:
 * better-sqlite3 commits each statement on its own unless a transaction is open.
 * BEGIN IMMEDIATE takes the write lock at once, so writers queue (busy_timeout)
 * instead of one failing at commit.
 */
export function immediateTransaction<D, T>(db: Kysely<D>, fn: (conn: Kysely<D>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`BEGIN IMMEDIATE`.execute(conn);
    try {
      const result = await fn(conn);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (error) {
      // SQLite may already have rolled back on its own (then ROLLBACK fails: no transaction).
      await sql`ROLLBACK`.execute(conn).catch(() => {});
      throw error;
    }
  });
}

export type { Sql };
