// Bare W2's database access: the statements of bare-sql.ts prepared once
// (better-sqlite3 `prepare`; pg named statements, prepared once per connection),
// rows as arrays in select-list order.
import BetterSqlite3 from '../src/db/better-sqlite3.ts';
import pg from 'pg';
import { BARE_SQL } from './bare-sql.ts';

type Value = string | number | null;
export type BareRow = readonly Value[];

export interface BareDriver {
  /** The company of the live client with this SPKI fingerprint, or null. */
  clientCompany(fingerprint: string): Promise<number | null>;
  count(root: number, before: string): Promise<number>;
  /** The first page. */
  page(root: number, before: string): Promise<readonly BareRow[]>;
  /** The files of these assets, `upload_endpoint` holding the token. */
  files(assetIds: readonly number[]): Promise<readonly BareRow[]>;
  close(): Promise<void>;
}

type Params = Record<string, Value>;
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

function openSqlite(file: string): BareDriver {
  const db = new BetterSqlite3(file, { fileMustExist: true });
  // As the service opens it (src/db/sqlite.ts).
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  const prepare = (text: string) => db.prepare(text.replace(PLACEHOLDER, '@$1'));
  const client = prepare(BARE_SQL.client).pluck();
  const count = prepare(BARE_SQL.count('sqlite')).pluck();
  const page = prepare(BARE_SQL.page('sqlite')).raw();
  const files = prepare(BARE_SQL.files('sqlite')).raw();
  return {
    clientCompany: async (fingerprint) => (client.get({ fingerprint }) as number | undefined) ?? null,
    count: async (root, before) => count.get({ root, before }) as number,
    page: async (root, before) => page.all({ root, before }) as BareRow[],
    files: async (ids) => files.all({ ids: JSON.stringify(ids) }) as BareRow[],
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

function openPostgres(url: string, poolSize: number): BareDriver {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: pgTypes,
  });
  pool.on('error', () => {});
  const statement = (name: string, sqlText: string) => {
    const { text, names } = numbered(sqlText);
    return (params: Params) => pool.query({ name, text, values: names.map((n) => params[n]), rowMode: 'array' });
  };
  const client = statement('bare_client', BARE_SQL.client);
  const count = statement('bare_count', BARE_SQL.count('postgres'));
  const page = statement('bare_page', BARE_SQL.page('postgres'));
  const files = statement('bare_files', BARE_SQL.files('postgres'));
  const rows = (r: { rows: unknown[][] }) => r.rows as BareRow[];
  return {
    clientCompany: async (fingerprint) => ((await client({ fingerprint })).rows[0]?.[0] as number | undefined) ?? null,
    count: async (root, before) => Number((await count({ root, before })).rows[0]![0]),
    page: (root, before) => page({ root, before }).then(rows),
    files: (ids) => files({ ids: JSON.stringify(ids) }).then(rows),
    close: () => pool.end(),
  };
}

export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//.test(url);

/** PostgreSQL when `url` is a postgres:// URL, else the SQLite file. */
export function openBareDriver(url: string | undefined, sqliteFile: string, poolSize = 10): BareDriver {
  return url && isPostgresUrl(url) ? openPostgres(url, poolSize) : openSqlite(sqliteFile);
}
