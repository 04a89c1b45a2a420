// The bare writes, as one would write them by hand against the plain tables of
// bare-tables.ts: W6's UPDATE of a range of ids and W7's multi-row INSERT of new
// assets, each with one audit row per changed or new record in bare_auditlog (the
// service's columns and content: endpoint, action, `Updated assets record N`, the
// changed fields as olddata/newdata JSON), all in one transaction. Statements are
// prepared once (bare-db.ts) and hold at most 1,000 rows each (SQLite binds at most
// 32,766 values to one).
import { openBareDb, type Value } from './bare-db.ts';
import type { AssetRow } from './seed-insert.ts';

const ASSET_COLUMNS = ['company_id', 'asset_no', 'serial_no', 'description', 'status', 'next_check', 'last_check', 'period',
  'location_id', 'department_id', 'external_type_id', 'date_added', 'data', 'modified'] as const satisfies readonly (keyof AssetRow)[];
export const AUDIT_COLUMNS = ['asset_id', 'company_id', 'user_id', 'file_id', 'logdate', 'message', 'olddata', 'newdata', 'endpoint', 'record_id',
  'action', 'client_id', 'ip'];
const ROWS_PER_STATEMENT = 1000;

const UPDATE = 'UPDATE bare_assets SET status = $1, modified = $2, version = version + 1 WHERE id BETWEEN $3 AND $4 RETURNING id, company_id';

/** `INSERT INTO table (columns) VALUES (…), …` of `rows` rows with $n placeholders. */
export function insertText(table: string, columns: readonly string[], rows: number, returning: string): string {
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) tuples.push(`(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`);
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}${returning}`;
}

export interface UpdateStep { readonly status: string; readonly previous: string; readonly modified: string; readonly first: number; readonly last: number }

export interface BareWriter {
  /** The UPDATE and an audit row per changed row; returns the rows changed. */
  update(step: UpdateStep): Promise<number>;
  /** One INSERT of the rows and one of their audit rows; returns their ids, ascending. */
  insert(rows: readonly AssetRow[], logdate: string): Promise<number[]>;
  close(): Promise<void>;
}

/** What the service writes for a certificate without a session: no user, its client id, the caller's address. */
export interface AuditSource { readonly clientId: number; readonly ip: string }

interface Changed { readonly id: number; readonly company_id: number }

const updateAudit = (s: AuditSource, step: UpdateStep, r: Changed): Value[] => [
  r.id, r.company_id, null, null, step.modified, `Updated assets record ${r.id}`, JSON.stringify({ status: step.previous }),
  JSON.stringify({ status: step.status }), 'assets', r.id, 'update', s.clientId, s.ip];

const createAudit = (s: AuditSource, logdate: string, row: AssetRow, id: number): Value[] => {
  const newdata = JSON.stringify({ id, ...row, data: row.data === null ? null : JSON.parse(row.data) as unknown, version: 1 });
  return [id, row.company_id, null, null, logdate, `Created assets record ${id}`, '{}', newdata, 'assets', id, 'create', s.clientId, s.ip];
};

/** Runs a statement of `rows` tuples of `columns` over `values` (tuples in order); the engine's own. */
type Run = (table: string, columns: readonly string[], rows: readonly Value[][], returning: string) => Promise<Changed[]>;

async function writeAll(run: Run, table: string, columns: readonly string[], rows: readonly Value[][], returning = ''): Promise<Changed[]> {
  const out: Changed[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) out.push(...await run(table, columns, rows.slice(i, i + ROWS_PER_STATEMENT), returning));
  return out;
}

/** The update and insert steps over a bare connection. */
export async function openBareWriter(url: string | undefined, sqliteFile: string, source: AuditSource): Promise<BareWriter> {
  const db = await openBareDb(url, sqliteFile);
  const run: Run = (table, columns, rows, returning) => db.query<Changed>(insertText(table, columns, rows.length, returning), rows.flat());
  return {
    update: (step) => db.transaction(async () => {
      const changed = await db.query<Changed>(UPDATE, [step.status, step.modified, step.first, step.last]);
      await writeAll(run, 'bare_auditlog', AUDIT_COLUMNS, changed.map((r) => updateAudit(source, step, r)));
      return changed.length;
    }),
    insert: (rows, logdate) => db.transaction(async () => {
      const values = rows.map((r) => ASSET_COLUMNS.map((c) => r[c]));
      const ids = (await writeAll(run, 'bare_assets', ASSET_COLUMNS, values, ' RETURNING id')).map((r) => r.id).sort((a, b) => a - b);
      await writeAll(run, 'bare_auditlog', AUDIT_COLUMNS, rows.map((r, i) => createAudit(source, logdate, r, ids[i]!)));
      return ids;
    }),
    close: db.close,
  };
}
