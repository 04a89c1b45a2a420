// The SQL of bare W2, in one place: what the service must do for W2 (who is the
// certificate, how many assets match, the page with its embeds, their files), as
// one would write it by hand against the same schema (the bare writes, W6's and
// W7's baselines, are in bare-writes.ts). Placeholders are `:name`; bare-driver.ts turns them
// into each engine's own.

import { type Engine, PAGE_SIZE } from './config.ts';

/**
 * `<alias>.company_id` is the caller's company (:root) or one of its descendants (the
 * schema's company closure table); on PostgreSQL read once into an array rather
 * than probed for every row a page walk tests.
 */
export const inScope = (engine: Engine, alias = 'a'): string => {
  const scope = 'SELECT descendant_id FROM company_closure WHERE ancestor_id = :root';
  return engine === 'sqlite' ? `${alias}.company_id IN (${scope})` : `${alias}.company_id = ANY(ARRAY(${scope}))`;
};

/** Columns written as stored JSON text rather than as JSON strings. */
export const JSON_COLUMNS: ReadonlySet<string> = new Set(['data', 'styles']);

export const ASSET_COLUMNS = ['id', 'company_id', 'asset_no', 'serial_no', 'description', 'status', 'next_check', 'last_check', 'last_result', 'period',
  'location_id', 'department_id', 'external_type_id', 'date_added', 'data', 'modified'] as const;

export interface Embed {
  readonly name: string;
  readonly table: string;
  readonly alias: string;
  /** The asset column that points at the embedded record. */
  readonly via: (typeof ASSET_COLUMNS)[number];
  readonly columns: readonly string[];
  /** Without a record: an object of nulls (true) or null (false). */
  readonly nullsWhenNone: boolean;
}

const PLACE = ['id', 'company_id', 'description', 'creationdate', 'data', 'modified', 'version'];
export const EMBEDS: readonly Embed[] = [
  { name: 'company', table: 'companies', alias: 'c', via: 'company_id', nullsWhenNone: false,
    columns: ['id', 'name', 'created', 'logo', 'subdomain', 'styles', 'data', 'parent_id', 'modified', 'version'] },
  { name: 'location', table: 'locations', alias: 'l', via: 'location_id', nullsWhenNone: false, columns: PLACE },
  { name: 'department', table: 'departments', alias: 'd', via: 'department_id', nullsWhenNone: false, columns: PLACE },
  { name: 'externaltype', table: 'externaltypes', alias: 'x', via: 'external_type_id', nullsWhenNone: true,
    columns: ['id', 'external_itemtype_id', 'company_id', 'description', 'data', 'modified', 'version'] },
];

/** A file record's members; `upload_endpoint` is BASE_URL + '/3.0/upload/' + the stored `token`. */
export const FILE_COLUMNS = ['id', 'upload_uuid', 'upload_endpoint', 'filedate', 'description', 'filename', 'asset_id', 'company_id', 'data',
  'mimetype', 'size', 'modified', 'version'] as const;

const overdue = 'a.next_check < :before';
// The asset's version comes last, after its embeds, as the service writes it.
const selectList = [...ASSET_COLUMNS.map((c) => `a.${c}`), ...EMBEDS.flatMap((e) => e.columns.map((c) => `${e.alias}.${c}`)), 'a.version'].join(', ');
const joins = EMBEDS.map((e) => `LEFT JOIN ${e.table} ${e.alias} ON ${e.alias}.id = a.${e.via}`).join('\n  ');

/** Each statement by name; `files` takes the page's asset ids as one JSON array text (:ids). */
export const BARE_SQL = {
  client: 'SELECT company_id FROM clients WHERE fingerprint = :fingerprint AND revoked IS NULL',
  // The schema's per-company, per-date tallies of assets answer how many are due before a date.
  count: (engine: Engine) => `SELECT COALESCE(SUM(a.n), 0) FROM asset_tallies a WHERE ${inScope(engine)} AND ${overdue}`,
  // The ids of the page first, then only those rows joined with their embeds (CROSS JOIN: SQLite
  // would otherwise walk all assets in id order to skip the sort). The page size is a constant.
  // W2's matches are dense (a fifth of the table), so on SQLite the ids come from walking
  // the assets in id order through their walk index, as the service's plan for such a page
  // does (src/engine/list.ts); the first page has no OFFSET, so PostgreSQL plans it once,
  // as it does the service's.
  page: (engine: Engine) => `WITH page(id) AS (SELECT a.id FROM assets a ${engine === 'sqlite' ? 'INDEXED BY assets_id_company_id_next_check_idx' : ''}
    WHERE ${overdue} AND ${inScope(engine)} ORDER BY a.id LIMIT ${PAGE_SIZE})
  SELECT ${selectList} FROM page p CROSS JOIN assets a
  ${joins}
  WHERE a.id = p.id ORDER BY p.id`,
  files: (engine: Engine) => {
    const ids = engine === 'sqlite' ? 'SELECT value FROM json_each(:ids)' : 'SELECT CAST(value AS bigint) FROM json_array_elements_text(CAST(:ids AS json))';
    const list = FILE_COLUMNS.map((c) => (c === 'upload_endpoint' ? 'f.token' : `f.${c}`)).join(', ');
    return `SELECT ${list} FROM files f WHERE f.asset_id IN (${ids}) ORDER BY f.id`;
  },
} as const;
