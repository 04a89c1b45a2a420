import { PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { errorCode, type Sql, type SqlDialect } from './dialect.ts';

const INT8 = 20;
const JSON_OID = 114;

// int8 → number (ids stay far below 2^53); json → its text untouched, so dynamic
// JSON keeps its written key order all the way to the response.
const parsers: Record<number, (v: string) => unknown> = { [INT8]: Number, [JSON_OID]: (v) => v };

function chain(column: Sql, keys: readonly string[], lastAsText: boolean): Sql {
  // `json -> text` only ever looks up an object key (never an array index), as
  // SQLite's `$."key"` path does, so both engines answer alike.
  if (keys.length === 0 && lastAsText) return sql`(${column} #>> '{}')`;
  return keys.reduce<Sql>((acc, k, i) =>
    lastAsText && i === keys.length - 1 ? sql`(${acc} ->> CAST(${k} AS text))` : sql`(${acc} -> CAST(${k} AS text))`, column);
}

export const postgresHooks: SqlDialect = {
  kind: 'postgres',
  json(column, keys) {
    const value = chain(column, keys, false);
    const text = sql`(${chain(column, keys, true)} COLLATE "C")`;
    return {
      kind: sql`(CASE json_typeof(${value}) WHEN 'object' THEN 'container' WHEN 'array' THEN 'container' ELSE json_typeof(${value}) END)`,
      text,
      number: sql`(CASE WHEN json_typeof(${value}) = 'number' THEN CAST(${chain(column, keys, true)} AS double precision) END)`,
    };
  },
  jsonEntries: (column) => ({
    join: sql`CROSS JOIN LATERAL json_each(CASE WHEN json_typeof(${column}) = 'object' THEN ${column} ELSE '{}'::json END) AS k(key, value)`,
    key: sql`(k.key COLLATE "C")`,
    kind: sql`(CASE json_typeof(k.value) WHEN 'object' THEN 'container' WHEN 'array' THEN 'container' ELSE json_typeof(k.value) END)`,
    text: sql`(CASE WHEN json_typeof(k.value) IN ('object', 'array') THEN NULL ELSE k.value #>> '{}' END)`,
  }),
  text: (expr) => sql`(CAST(${expr} AS text) COLLATE "C")`,
  bytewise: (expr) => sql`(${expr} COLLATE "C")`,
  like: (expr, pattern) => sql`(${expr} ILIKE ${pattern} ESCAPE '\\')`,
  lockMatched: sql`FOR UPDATE OF t`,
  lockFor: (key) => sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`,
  isUniqueViolation: (e) => errorCode(e) === '23505',
  isForeignKeyViolation: (e) => errorCode(e) === '23503',
  isTransient: (e) => errorCode(e) === '40P01' || errorCode(e) === '40001',
};

export function openPostgres(connectionString: string, max = 10): PostgresDialect {
  const pool = new pg.Pool({
    connectionString,
    max,
    types: { getTypeParser: ((oid: number, format?: string) => parsers[oid] ?? pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser },
  });
  // An idle connection the server ends (restart, pg_terminate_backend, DROP … FORCE) is
  // already purged by the pool, which then emits 'error': without a listener that
  // would crash the process. The next query simply opens a new connection.
  pool.on('error', () => {});
  return new PostgresDialect({ pool });
}
