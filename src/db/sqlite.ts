import BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect, sql } from 'kysely';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorCode, type Sql, type SqlDialect } from './dialect.ts';

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
  text: (expr) => sql`CAST(${expr} AS TEXT)`,
  bytewise: (expr) => expr,
  like: (expr, pattern) => sql`(${expr} LIKE ${pattern} ESCAPE '\\')`,
  lockMatched: sql``,
  lockFor: () => sql`SELECT 1`,
  isUniqueViolation: (e) => errorCode(e) === 'SQLITE_CONSTRAINT_UNIQUE' || errorCode(e) === 'SQLITE_CONSTRAINT_PRIMARYKEY',
  isForeignKeyViolation: (e) => errorCode(e) === 'SQLITE_CONSTRAINT_FOREIGNKEY',
  isTransient: (e) => errorCode(e) === 'SQLITE_BUSY',
};

/**
 * Opens the embedded database: WAL, synchronous=FULL, foreign keys on (spec §11).
 * Kysely prepares a statement for every query; better-sqlite3 statements are
 * reusable, so prepared statements are cached by their SQL text.
 */
export function openSqlite(file: string): SqliteDialect {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  const cache = new Map<string, BetterSqlite3.Statement>();
  const database = {
    close: () => raw.close(),
    prepare(text: string) {
      let stmt = cache.get(text);
      if (!stmt) {
        stmt = raw.prepare(text);
        if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
        cache.set(text, stmt);
      }
      return stmt;
    },
  };
  return new SqliteDialect({ database });
}

export type { Sql };
