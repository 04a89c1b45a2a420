// Deleting records and what refers to them (spec §6): a reference marked
// 'restrict' refuses the delete with 409, 'cascade' deletes the referring records
// too, 'set-null' clears the reference; each affected record is audited.
import { sql } from 'kysely';
import { dataError } from '../errors.ts';
import { chunks } from '../model/chunks.ts';
import type { FieldDef, ResourceDef, Row } from '../model/types.ts';
import { fieldsJson, recordEntry, storedFields } from './audit.ts';
import type { Registry } from './context.ts';
import type { Resource, WriteTx } from './resource.ts';

interface Referrer { readonly def: ResourceDef; readonly field: FieldDef }

const referrerCache = new WeakMap<ResourceDef, Referrer[]>();

function referrersOf(registry: Registry, def: ResourceDef): Referrer[] {
  let found = referrerCache.get(def);
  if (!found) {
    found = registry.all.flatMap((r) => r.fields.filter((f) => f.references?.resource === def.name).map((field) => ({ def: r, field })));
    referrerCache.set(def, found);
  }
  return found;
}


export async function removeRecords(tx: WriteTx, res: Resource, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  const { def } = res;
  const registry = tx.ctx.catalog;
  await res.hooks?.beforeDelete?.(tx, rows);
  const ids = rows.map((r) => Number(r.id));
  for (const ref of referrersOf(registry, def)) await applyReferrer(tx, def, ids, ref);
  for (const internal of registry.internal.filter((i) => i.resource === def.name)) {
    for (const part of chunks(ids)) {
      const where = sql`${sql.ref(internal.column)} IN (${sql.join(part)})`;
      if (internal.onDelete === 'cascade') {
        await sql`DELETE FROM ${sql.table(internal.table)} WHERE ${where}`.execute(tx.db);
        continue;
      }
      const { rows: found } = await sql<{ ref: number }>`SELECT ${sql.ref(internal.column)} AS ref FROM ${sql.table(internal.table)}
        WHERE ${where} LIMIT 1`.execute(tx.db);
      if (found[0]) throw dataError(`${def.name} record ${found[0].ref} is still referenced by ${internal.table}`);
    }
  }
  for (const part of chunks(ids)) await sql`DELETE FROM ${sql.table(def.table)} WHERE id IN (${sql.join(part)})`.execute(tx.db);
  const fields = storedFields(def);
  for (const row of rows) tx.audit(recordEntry(def, 'delete', row, fieldsJson(fields, row), '{}'));
}

async function applyReferrer(tx: WriteTx, def: ResourceDef, ids: readonly number[], { def: other, field }: Referrer): Promise<void> {
  const rule = field.references!.onDelete;
  if (rule === 'keep') return;
  const column = sql.ref(field.column ?? field.name);
  for (const part of chunks(ids)) {
    // Records deleted in this same request do not hold their own kind back.
    const notDeleted = other === def ? sql`AND id NOT IN (${sql.join(ids)})` : sql``;
    const where = sql`${column} IN (${sql.join(part)}) ${notDeleted}`;
    if (rule === 'restrict') {
      const { rows } = await sql<{ ref: number }>`SELECT ${column} AS ref FROM ${sql.table(other.table)} WHERE ${where} LIMIT 1`.execute(tx.db);
      if (rows[0]) throw dataError(`${def.name} record ${rows[0].ref} is still referenced by ${other.name}`);
      continue;
    }
    const { rows } = await sql<Row>`SELECT * FROM ${sql.table(other.table)} WHERE ${where} ORDER BY id`.execute(tx.db);
    if (rows.length === 0) continue;
    const otherResource = tx.ctx.catalog.resource(other.name)!;
    if (rule === 'cascade') {
      await removeRecords(tx, otherResource, rows);
      continue;
    }
    await clearReference(tx, other, field, rows);
  }
}

/** Sets a reference of the given records to NULL (audited), as the engine's own cleanup: no hooks run. */
export async function clearReference(tx: WriteTx, def: ResourceDef, field: FieldDef, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  const touched = def.fields.filter((f) => f.touch).map((f) => sql`${sql.ref(f.name)} = ${tx.now}`);
  const ids = rows.map((r) => Number(r.id));
  for (const part of chunks(ids)) {
    await sql`UPDATE ${sql.table(def.table)} SET ${sql.join([sql`${sql.ref(field.column ?? field.name)} = NULL`, ...touched])}
      WHERE id IN (${sql.join(part)})`.execute(tx.db);
  }
  for (const row of rows) {
    const next = { ...row, [field.name]: null };
    tx.audit(recordEntry(def, 'update', next, fieldsJson([field], row), fieldsJson([field], next)));
  }
}
