import { type Kysely, PostgresAdapter, type PostgresPool, type PostgresPoolClient, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Sql, SqlDialect } from '../model/dialect.ts';
import { concatObject, errorCode } from './dialect.ts';
import { dbPoolWait, type PoolStats } from '../metrics.ts';
import { Lru } from '../model/lru.ts';
import { postgresEventTriggers, postgresInsertEvents } from './postgres-events.ts';

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

/** Whether a Kysely instance speaks to PostgreSQL (db/dialects.ts). */
export const onPostgres = (db: Kysely<unknown>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

export const postgresHooks: SqlDialect = {
  kind: 'postgres',
  json(column, keys) {
    const value = chain(column, keys, false);
    const text = sql`(${chain(column, keys, true)} COLLATE "C")`;
    return {
      kind: sql`(CASE json_typeof(${value}) WHEN 'object' THEN 'container' WHEN 'array' THEN 'container' ELSE json_typeof(${value}) END)`,
      text,
      // numeric, not double precision: a stored 1e400 would not fit one, and would fail every comparison.
      number: sql`(CASE WHEN json_typeof(${value}) = 'number' THEN CAST(${chain(column, keys, true)} AS numeric) END)`,
    };
  },
  jsonEntries: (column) => ({
    join: sql`CROSS JOIN LATERAL json_each(CASE WHEN json_typeof(${column}) = 'object' THEN ${column} ELSE '{}'::json END) AS k(key, value)`,
    key: sql`(k.key COLLATE "C")`,
    kind: sql`(CASE json_typeof(k.value) WHEN 'object' THEN 'container' WHEN 'array' THEN 'container' ELSE json_typeof(k.value) END)`,
    text: sql`(CASE WHEN json_typeof(k.value) IN ('object', 'array') THEN NULL ELSE k.value #>> '{}' END)`,
  }),
  jsonValue: (type, expr) => (type === 'int' || type === 'bool' || type === 'json' ? sql`COALESCE(CAST(${expr} AS text), 'null')`
    : sql`COALESCE(CAST(to_json(${expr}) AS text), 'null')`),
  // row_to_json writes compact JSON (json_build_object would add spaces): one call per
  // object instead of an expression per member. json values (stored JSON, embedded
  // objects) are inserted verbatim.
  jsonObject: (members) => sql`(SELECT row_to_json(o) FROM (SELECT ${sql.join(members.map((m) => sql`${m.value} AS ${sql.id(m.name)}`))}) AS o)`,
  // Read by concatenation: row_to_json's subquery per object (a record's, each embed's) costs
  // more to set up than the record costs to read (a GET by id: 245 against 134 µs, measured).
  jsonObjectText: (members) => concatObject(members, postgresHooks.jsonValue),
  // An ORDER BY inside the aggregate sorts on every call (PostgreSQL < 16); rows that
  // come ordered from an index-ordered subquery are aggregated in that order.
  jsonArrayText: (item, from, order) => sql`('[' || COALESCE((SELECT string_agg(x.item, ',') FROM (SELECT ${item} AS item ${from}
    ORDER BY ${order}) AS x), '') || ']')`,
  inIds: (expr, ids) => sql`${expr} = ANY(CAST(${ids} AS bigint[]))`,
  inTexts: (expr, texts) => sql`${expr} = ANY(CAST(${texts} AS text[]))`,
  idList: (ids) => ids,
  // jsonb: parsed once; json's elements were parsed again for every member read (1,000 audit rows: 43 → 23 ms).
  // jsonb: parsed once; json's elements were parsed again for every member read (1,000 audit rows: 43 → 23 ms).
  selectRows: (rows, types) => sql`SELECT ${sql.join(types.map((t, i) => {
    const text = sql`(r.value ->> ${sql.lit(i)})`;
    return t === 'int' || t === 'bool' ? sql`CAST(${text} AS bigint)` : t === 'json' ? sql`CAST(${text} AS json)` : text;
  }))} FROM jsonb_array_elements(CAST(${rows} AS jsonb)) WITH ORDINALITY AS r(value, n) ORDER BY r.n`,
  rowList: (rows) => JSON.stringify(rows),
  // A page walked in id order tests every row it passes: 3,030 of them for page 101 of W2 cost 2.2 ms against 1.55.
  inSubquery: (expr, subquery) => sql`${expr} = ANY(ARRAY(${subquery}))`,
  rowKey: sql`ctid`,
  differs: (a, b, type) => (type === 'json' ? sql`(CAST(${a} AS text) IS DISTINCT FROM CAST(${b} AS text))` : sql`(${a} IS DISTINCT FROM ${b})`),
  dateText: (y, m, d) => sql`(lpad(CAST(${y} AS text), 4, '0') || '-' || lpad(CAST(${m} AS text), 2, '0') || '-' || lpad(CAST(${d} AS text), 2, '0'))`,
  cast: (value, type) => sql`CAST(${value} AS ${sql.raw(type === 'int' ? 'bigint' : type)})`,
  number: (text) => sql`CAST(${text} AS numeric)`,
  text: (expr) => sql`(CAST(${expr} AS text) COLLATE "C")`,
  bytewise: (expr) => sql`(${expr} COLLATE "C")`,
  // Under COLLATE "C", lower() folds ASCII letters only, as SQLite's does.
  contains: (expr, needle) => sql`(strpos(lower(${expr} COLLATE "C"), lower(CAST(${needle} AS text) COLLATE "C")) > 0)`,
  writesAlone: false,
  idWalk: () => sql``,
  lockMatched: sql`FOR UPDATE OF t`,
  lockFor: (key) => sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`,
  skipLocked: sql`FOR UPDATE SKIP LOCKED`,
  plansPerExecution: sql`SET LOCAL plan_cache_mode = force_custom_plan`,
  eventTriggers: (table) => postgresEventTriggers(postgresHooks, table),
  insertEvents: (table, kind, from, extra) => postgresInsertEvents(postgresHooks, table, kind, from, extra),
  isUniqueViolation: (e) => errorCode(e) === '23505',
  isForeignKeyViolation: (e) => errorCode(e) === '23503',
  isTransient: (e) => errorCode(e) === '40P01' || errorCode(e) === '40001',
};

/** Distinct statements one connection keeps prepared; past it the connection is replaced on release. */
const NAMED_PER_CONNECTION = 250;
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;

type Query = (text: unknown, values?: unknown) => unknown;

/**
 * Every statement runs as a named (prepared) statement: PostgreSQL parses and
 * plans it once per connection instead of on every execution. The text is the
 * key, so the same shape compiled anywhere shares one name. A connection that
 * has prepared its bound of distinct statements (a flood of distinct filter
 * shapes) is closed when released, so server memory stays bounded.
 */
function namedStatements(pool: pg.Pool): PostgresPool {
  const names = new Lru<string, string>(4 * NAMED_PER_CONNECTION);
  let counter = 0;
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) names.set(text, (name = `s${++counter}`));
    return name;
  };
  const prepared = new WeakMap<pg.PoolClient, Set<string>>();
  const patch = (client: pg.PoolClient) => {
    if (prepared.has(client)) return;
    const own = new Set<string>();
    prepared.set(client, own);
    const query = client.query.bind(client) as Query;
    (client as unknown as { query: Query }).query = (text, values) => {
      if (typeof text !== 'string' || !PREPARABLE.test(text)) return query(text, values);
      const name = nameOf(text);
      if (!own.has(name)) {
        if (own.size >= NAMED_PER_CONNECTION) return query(text, values);
        own.add(name);
      }
      return query({ name, text, values });
    };
  };
  return {
    async connect(): Promise<PostgresPoolClient> {
      const started = performance.now();
      const client = await pool.connect();
      dbPoolWait.observe({ engine: 'postgres' }, (performance.now() - started) / 1000);
      patch(client);
      const release = client.release.bind(client);
      const own = prepared.get(client)!;
      return Object.assign(client, { release: () => release(own.size >= NAMED_PER_CONNECTION) });
    },
    end: () => pool.end(),
  };
}

export interface PostgresConnections {
  readonly dialect: PostgresDialect;
  /**
   * The same pool for background work (jobs, webhook delivery), which holds at
   * most `backgroundShare` of its connections at once, so that requests always
   * find one however much background work there is.
   */
  readonly background: PostgresDialect;
  readonly backgroundShare: number;
  /** The pool itself (every statement named), for a read replica's fallback to the primary. */
  readonly pool: PostgresPool;
  /** Reads outside transactions straight from the pool (a named statement, no query builder). */
  readonly read: (text: string, params: readonly unknown[]) => Promise<unknown[]>;
  readonly readBackground: (text: string, params: readonly unknown[]) => Promise<unknown[]>;
  /** The pool's connections and waiters, for the metrics. */
  readonly stats: () => PoolStats;
}

/** `connectTimeoutMs`: how long opening a connection may take (default: no limit). */
export function openPostgres(connectionString: string, max = 10, connectTimeoutMs = 0): PostgresConnections {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    types: { getTypeParser: ((oid: number, format?: string) => parsers[oid] ?? (pg.types.getTypeParser(oid, format as 'text') as (v: string) => unknown)) as typeof pg.types.getTypeParser },
  });
  // An idle connection the server ends (restart, pg_terminate_backend, DROP … FORCE) is
  // already purged by the pool, which then emits 'error': without a listener that
  // would crash the process. The next query simply opens a new connection.
  pool.on('error', () => {});
  const named = namedStatements(pool);
  // A quarter of the pool, at least one connection, and always one fewer than the pool.
  const share = Math.max(1, Math.min(max - 1, Math.floor(max / 4)));
  const backgroundPool = limited(named, share);
  return {
    dialect: new PostgresDialect({ pool: named }),
    stats: () => ({ engine: 'postgres', size: pool.totalCount, idle: pool.idleCount, max, waiting: pool.waitingCount }),
    background: new PostgresDialect({ pool: backgroundPool }),
    backgroundShare: share,
    pool: named,
    read: (text, params) => readOn(named, text, params),
    readBackground: (text, params) => readOn(backgroundPool, text, params),
  };
}

export async function readOn(pool: PostgresPool, text: string, params: readonly unknown[]): Promise<unknown[]> {
  const client = await pool.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    client.release();
  }
}

/**
 * A view of a pool that lends at most `max` connections at once (callers beyond
 * wait, in order); ending it leaves the pool open (its owner ends it).
 */
function limited(pool: PostgresPool, max: number): PostgresPool {
  let lent = 0;
  const waiting: (() => void)[] = [];
  const returned = () => {
    const next = waiting.shift();
    if (next) next();
    else lent--;
  };
  return {
    async connect(): Promise<PostgresPoolClient> {
      if (lent < max) lent++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      let client: PostgresPoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        returned();
        throw error;
      }
      const release = client.release.bind(client);
      let done = false;
      return Object.assign(client, {
        release: () => {
          if (!done) { done = true; returned(); }
          release();
        },
      });
    },
    end: async () => {},
  };
}
