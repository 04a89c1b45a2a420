// The bare servers' database access (bare W2, bare W9): statements prepared once
// (better-sqlite3 `prepare`; pg named statements, prepared once per connection of a
// pool), `:name` placeholders, rows as arrays in select-list order; and bare W2's
// statements of bare-sql.ts on top.
import BetterSqlite3 from '../src/db/better-sqlite3.ts';
import pg from 'pg';
import type { Engine } from './config.ts';
import { BARE_SQL } from './bare-sql.ts';

type Value = string | number | null;
export type BareRow = readonly Value[];
export type Params = Record<string, Value>;

/** Prepared statements on one store. */
export interface Prepared {
  readonly engine: Engine;
  /** Prepares `text` (once, under `name`); the function runs it. */
  readonly statement: (name: string, text: string) => (params: Params) => Promise<BareRow[]>;
  readonly close: () => Promise<void>;
}

/** A `:name` placeholder (not a `::` cast). */
const PLACEHOLDER = /(?<!:):([a-z_]+)/g;

/** `:name` placeholders → `$1…` in order of first use, with the names in that order. */
function numbered(text: string): { text: string; names: string[] } {
  const names: string[] = [];
  const out = text.replace(PLACEHOLDER, (_m, name: string) => {
    if (!names.includes(name)) names.push(name);
    return `$${names.indexOf(name) + 1}`;
  });
  return { text: out, names };
}

function openSqlite(file: string): Prepared {
  const db = new BetterSqlite3(file, { fileMustExist: true });
  // As the service opens it (src/db/sqlite.ts).
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  return {
    engine: 'sqlite',
    statement: (_name, text) => {
      const s = db.prepare(text.replace(PLACEHOLDER, '@$1')).raw();
      return async (params) => s.all(params) as BareRow[];
    },
    close: async () => { db.close(); },
  };
}

const INT8 = 20;
const JSON_OID = 114;
// int8 → number (ids stay far below 2^53); json → its text as stored.
const parsers: Record<number, (v: string) => Value> = { [INT8]: Number, [JSON_OID]: (v) => v };
/** The type parsers of the bare baselines' pg connections. */
export const pgTypes = {
  getTypeParser: ((oid: number, format?: string) => parsers[oid] ?? (pg.types.getTypeParser(oid, format as 'text') as (v: string) => Value)) as typeof pg.types.getTypeParser,
};

function openPostgres(url: string, poolSize: number): Prepared {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes });
  pool.on('error', () => {});
  return {
    engine: 'postgres',
    statement: (name, sqlText) => {
      const { text, names } = numbered(sqlText);
      return async (params) => (await pool.query({ name, text, values: names.map((n) => params[n]), rowMode: 'array' })).rows as BareRow[];
    },
    close: () => pool.end(),
  };
}

export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//.test(url);

/** PostgreSQL when `url` is a postgres:// URL, else the SQLite file. */
export function openPrepared(url: string | undefined, sqliteFile: string, poolSize = 10): Prepared {
  return url && isPostgresUrl(url) ? openPostgres(url, poolSize) : openSqlite(sqliteFile);
}

/** The company of the live client with this SPKI fingerprint, or null. */
export function clientCompanyOf(p: Prepared): (fingerprint: string) => Promise<number | null> {
  const client = p.statement('bare_client', BARE_SQL.client);
  return async (fingerprint) => ((await client({ fingerprint }))[0]?.[0] as number | undefined) ?? null;
}

export interface BareDriver {
  readonly clientCompany: (fingerprint: string) => Promise<number | null>;
  readonly count: (root: number, before: string) => Promise<number>;
  /** The first page. */
  readonly page: (root: number, before: string) => Promise<readonly BareRow[]>;
  /** The files of these assets, `upload_endpoint` holding the token. */
  readonly files: (assetIds: readonly number[]) => Promise<readonly BareRow[]>;
  readonly close: () => Promise<void>;
}

/** Bare W2's statements. */
export function openBareDriver(url: string | undefined, sqliteFile: string, poolSize = 10): BareDriver {
  const p = openPrepared(url, sqliteFile, poolSize);
  const count = p.statement('bare_count', BARE_SQL.count(p.engine));
  const page = p.statement('bare_page', BARE_SQL.page(p.engine));
  const files = p.statement('bare_files', BARE_SQL.files(p.engine));
  return {
    clientCompany: clientCompanyOf(p),
    count: async (root, before) => Number((await count({ root, before }))[0]![0]),
    page: (root, before) => page({ root, before }),
    files: (ids) => files({ ids: JSON.stringify(ids) }),
    close: p.close,
  };
}
