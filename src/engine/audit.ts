// Audit entries are collected during a write and inserted in the same
// transaction, just before it commits (spec §8.4).
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { jsonObjectText } from '../model/json.ts';
import type { FieldDef, ResourceDef, Row } from '../model/types.ts';
import type { Ctx } from './context.ts';
import { valueJson } from './serialize.ts';

export type AuditAction = 'create' | 'update' | 'delete' | 'login' | 'logout' | 'note';

export interface AuditEntry {
  readonly endpoint: string;
  readonly action: AuditAction;
  readonly message: string;
  readonly recordId: number | null;
  readonly companyId: number | null;
  readonly assetId?: number | null;
  readonly fileId?: number | null;
  readonly olddata?: string;
  readonly newdata?: string;
  /** Overrides the session user (login records the user who logged in). */
  readonly userId?: number | null;
}

const COLUMNS = ['asset_id', 'company_id', 'user_id', 'file_id', 'logdate', 'message', 'olddata', 'newdata',
  'endpoint', 'record_id', 'action', 'client_id', 'ip'] as const;

/** Fields held in the record's own columns (computed read-only fields are not). */
export const storedFields = (def: ResourceDef): readonly FieldDef[] => def.fields.filter((f) => !f.computed || f.writable);

/** JSON object text of the given fields of a record (`olddata` / `newdata`). */
export function fieldsJson(fields: readonly FieldDef[], row: Row): string {
  return jsonObjectText(fields.map((f) => [f.name, valueJson(f.type, row[f.name])] as const));
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** The audit entry for a change to one record of a resource. */
export function recordEntry(def: ResourceDef, action: 'create' | 'update' | 'delete', row: Row,
  olddata: string, newdata: string, message?: string): AuditEntry {
  const id = num(row.id);
  const verb = { create: 'Created', update: 'Updated', delete: 'Deleted' }[action];
  return {
    endpoint: def.name, action, recordId: id, companyId: num(row[def.scopeColumn]),
    assetId: def.audit?.asset ? num(row[def.audit.asset]) : null,
    fileId: def.audit?.file ? num(row[def.audit.file]) : null,
    message: message ?? `${verb} ${def.name} record ${id}`, olddata, newdata,
  };
}

const valuesOf = (ctx: Ctx, logdate: string, e: AuditEntry) => sql`(${sql.join([
  e.assetId ?? null, e.companyId, e.userId !== undefined ? e.userId : (ctx.principal.session?.userId ?? null), e.fileId ?? null,
  logdate, e.message, e.olddata ?? '{}', e.newdata ?? '{}', e.endpoint, e.recordId, e.action, ctx.principal.clientId, ctx.ip,
])})`;

const columnList = sql.join(COLUMNS.map((c) => sql.ref(c)));

export async function insertAudit(ctx: Ctx, db: Db, logdate: string, entries: readonly AuditEntry[]): Promise<void> {
  const rows = entries.map((e) => valuesOf(ctx, logdate, e));
  for (let i = 0; i < rows.length; i += 200) {
    await sql`INSERT INTO auditlog (${columnList}) VALUES ${sql.join(rows.slice(i, i + 200))}`.execute(db);
  }
}

/** Inserts one entry and returns its id (notes, which are records in their own right). */
export async function insertAuditEntry(ctx: Ctx, db: Db, logdate: string, entry: AuditEntry): Promise<number> {
  const { rows } = await sql<{ id: number }>`INSERT INTO auditlog (${columnList}) VALUES ${valuesOf(ctx, logdate, entry)} RETURNING id`.execute(db);
  return Number(rows[0]!.id);
}
