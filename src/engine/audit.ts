// Audit entries are written in the same transaction as the change.
// Entries built in JS (creates, row-by-row updates) are buffered and inserted in
// batches; entries of set-based changes are written by the database itself, one
// INSERT … SELECT over the changed rows, however many there are.
import { sql } from 'kysely';
import { type Db, execute } from '../db/database.ts';
import { Param } from '../db/statements.ts';
import type { Sql } from '../model/dialect.ts';
import type { FieldDef, FieldType, ResourceDef, Row, SqlValue } from '../model/types.ts';
import { PARAMS } from './params.ts';
import type { AuditEntry, AuditSelect, Ctx, Shape } from './types.ts';

/** A value as JSON text, as the service writes it everywhere (the same text the database writes, see jsonValue). */
export function valueJson(type: FieldType, v: SqlValue | undefined): string {
  if (v === null || v === undefined) return 'null';
  if (type === 'json' || type === 'int' || type === 'bool') return String(v);
  return JSON.stringify(v);
}

const COLUMNS = ['asset_id', 'company_id', 'user_id', 'file_id', 'logdate', 'message', 'olddata', 'newdata',
  'endpoint', 'record_id', 'action', 'client_id', 'ip'] as const;

/** Fields held in the record's own columns (computed read-only fields are not). */
export const storedFields = (def: ResourceDef): readonly FieldDef[] => def.fields.filter((f) => !f.computed || f.writable);

/** A field name as a JSON string, made once per name (a 1,000-record PUT writes each twenty times a thousand). */
const quotedNames = new Map<string, string>();
const quoted = (name: string): string => {
  let q = quotedNames.get(name);
  if (q === undefined) quotedNames.set(name, (q = JSON.stringify(name)));
  return q;
};

/** JSON object text of the given fields of a record (`olddata` / `newdata`). */
export function fieldsJson(fields: readonly FieldDef[], row: Row): string {
  let out = '';
  for (const f of fields) out += `${out === '' ? '{' : ','}${quoted(f.name)}:${valueJson(f.type, row[f.name])}`;
  return out === '' ? '{}' : `${out}}`;
}

const VERBS = { create: 'Created', update: 'Updated', delete: 'Deleted' } as const;

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** The audit entry for a change to one record of a resource. */
export function recordEntry(def: ResourceDef, action: 'create' | 'update' | 'delete', row: Row,
  olddata: string, newdata: string, message?: string): AuditEntry {
  const id = num(row.id);
  const verb = VERBS[action];
  return {
    endpoint: def.name, action, recordId: id, companyId: num(row[def.scopeColumn]),
    assetId: def.audit?.asset ? num(row[def.audit.asset]) : null,
    fileId: def.audit?.file ? num(row[def.audit.file]) : null,
    message: message ?? `${verb} ${def.name} record ${id}`, olddata, newdata,
  };
}

const valuesOf = (ctx: Ctx, logdate: string, e: AuditEntry) => [
  e.assetId ?? null, e.companyId, e.userId !== undefined ? e.userId : (ctx.principal.session?.userId ?? null), e.fileId ?? null,
  logdate, e.message, e.olddata ?? '{}', e.newdata ?? '{}', e.endpoint, e.recordId, e.action, ctx.principal.clientId, ctx.ip,
];
const TYPES: readonly FieldType[] = ['int', 'int', 'int', 'int', 'datetime', 'string', 'json', 'json', 'string', 'int', 'string', 'int', 'string'];

const columnList = sql.join(COLUMNS.map((c) => sql.ref(c)));
const ENTRIES = new Param('entries');
/** Entries to one INSERT (a statement of any number of rows has one text: see SqlDialect.selectRows). */
const PER_STATEMENT = 500;

export async function insertAudit(ctx: Ctx, db: Db, logdate: string, entries: readonly AuditEntry[]): Promise<void> {
  const { hooks } = ctx.database;
  const statement = ctx.database.statements.get('audit|insert', () => sql`INSERT INTO auditlog (${columnList}) ${hooks.selectRows(ENTRIES, TYPES)}`);
  for (let i = 0; i < entries.length; i += PER_STATEMENT) {
    const rows = entries.slice(i, i + PER_STATEMENT).map((e) => valuesOf(ctx, logdate, e));
    await execute(db, statement, { entries: hooks.rowList(rows) });
  }
}

/** Inserts one entry and returns its id (notes, which are records in their own right). */
export async function insertAuditEntry(ctx: Ctx, db: Db, logdate: string, entry: AuditEntry): Promise<number> {
  const { rows } = await sql<{ id: number }>`INSERT INTO auditlog (${columnList}) VALUES (${sql.join(valuesOf(ctx, logdate, entry))}) RETURNING id`.execute(db);
  return Number(rows[0]!.id);
}

/** One entry per row of `def` that `where` selects, built by the database (record ids ascending). */
export function auditSelect(s: Shape, def: ResourceDef, action: 'create' | 'update' | 'delete', o: AuditSelect): Sql {
  const column = (name: string | undefined) => (name ? sql.ref(`t.${name}`) : sql`NULL`);
  const { cast } = s.hooks;
  const message = sql`(${sql.lit(`${VERBS[action]} ${def.name} record `)} || CAST(t.id AS TEXT))`;
  return sql`INSERT INTO auditlog (${columnList}) SELECT ${sql.join([
    column(def.audit?.asset), sql.ref(`t.${def.scopeColumn}`), cast(PARAMS.user, 'int'), column(def.audit?.file),
    cast(PARAMS.now, 'text'), message, cast(o.olddata, 'json'), cast(o.newdata, 'json'), sql.lit(def.name), sql`t.id`, sql.lit(action),
    cast(PARAMS.client, 'int'), cast(PARAMS.ip, 'text'),
  ])} FROM ${sql.table(def.table)} AS t WHERE ${o.where} ORDER BY t.id`;
}
