// DELETE: the matched records and what refers to them, set-based over
// the list of matched ids. A reference marked 'restrict' refuses the delete with
// 409, 'cascade' deletes the referring records too, 'set-null' clears the
// reference; every affected record is audited by one INSERT … SELECT per table.
import { sql } from 'kysely';
import { Param } from '../db/statements.ts';
import { dataError, filterRequired } from '../errors.ts';
import type { FieldDef, ResourceDef } from '../model/types.ts';
import { auditSelect, storedFields } from './audit.ts';
import { PARAMS } from './params.ts';
import { objectSql } from './record-json.ts';
import { columnOf } from './select.ts';
import { checkPrecondition, readIfMatch } from './precondition.ts';
import { amongIds, bookkeeping, byIds, idValues, inWriteTx, matchIds, rowsOf, setList } from './write.ts';
import type { Ctx, DeleteResult, Query, Registry, Reply, Resource, WriteTx } from './types.ts';

/** DELETE: `ifMatch` is the If-Match header; `answer` makes the reply kept with the write. */
export async function deleteRecords(ctx: Ctx, res: Resource, query: Query, ifMatch?: string,
  answer?: (r: DeleteResult) => Reply): Promise<DeleteResult> {
  if (query.conditions.length === 0) throw filterRequired(res.def.name, 'DELETE');
  const pre = readIfMatch(ifMatch);
  return inWriteTx(ctx, async (tx) => {
    const ids = await matchIds(tx, res.def, query);
    if (pre) await checkPrecondition(tx, res.def, query, byIds(tx, ids), pre);
    await removeRecords(tx, res, ids);
    return { deleted: ids.length, found: ids.length };
  }, answer);
}

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

const IDS = sql`${new Param('ids')}`;

/** Deletes the records `ids` of a resource (ascending) and applies every reference to them. */
export async function removeRecords(tx: WriteTx, res: Resource, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const { def } = res;
  const registry = tx.ctx.catalog;
  const values = idValues(tx, ids);
  if (res.hooks?.beforeDelete) await res.hooks.beforeDelete(tx, await rowsOf(tx, def, ids));
  for (const ref of referrersOf(registry, def)) await applyReferrer(tx, def, ids, ref);
  const { inIds } = tx.shape.hooks;
  for (const internal of registry.internal.filter((i) => i.resource === def.name)) {
    const key = `${internal.table}.${internal.column}`;
    const where = inIds(sql.ref(internal.column), IDS);
    if (internal.onDelete === 'cascade') {
      await tx.run(`cascade|${key}`, () => sql`DELETE FROM ${sql.table(internal.table)} WHERE ${where}`, values);
      continue;
    }
    const { rows } = await tx.run<{ ref: number }>(`restrict|${key}`,
      () => sql`SELECT ${sql.ref(internal.column)} AS ref FROM ${sql.table(internal.table)} WHERE ${where} LIMIT 1`, values);
    if (rows[0]) throw dataError(`${def.name} record ${rows[0].ref} is still referenced by ${internal.name ?? internal.table}`);
  }
  await tx.flushAudit();
  await tx.run(`delete-audit|${def.name}`, () => auditSelect(tx.shape, def, 'delete', {
    olddata: objectSql(tx.shape, storedFields(def), 't'), newdata: sql`'{}'`, where: amongIds(tx),
  }), values);
  await tx.run(`delete|${def.name}`, () => sql`DELETE FROM ${sql.table(def.table)} WHERE ${inIds(sql.ref('id'), IDS)}`, values);
}

async function applyReferrer(tx: WriteTx, def: ResourceDef, ids: readonly number[], { def: other, field }: Referrer): Promise<void> {
  const rule = field.references!.onDelete;
  if (rule === 'keep') return;
  const { inIds } = tx.shape.hooks;
  const column = sql.ref(`t.${columnOf(field)}`);
  // Records deleted in this same request do not hold their own kind back.
  const where = other === def ? sql`${inIds(column, IDS)} AND NOT (${inIds(sql.ref('t.id'), IDS)})` : inIds(column, IDS);
  const key = `${def.name}|${other.name}.${field.name}`;
  const values = idValues(tx, ids);
  if (rule === 'restrict') {
    const { rows } = await tx.run<{ ref: number }>(`restrict|${key}`,
      () => sql`SELECT ${column} AS ref FROM ${sql.table(other.table)} AS t WHERE ${where} LIMIT 1`, values);
    if (rows[0]) throw dataError(`${def.name} record ${rows[0].ref} is still referenced by ${other.name}`);
    return;
  }
  const { rows } = await tx.run<{ id: number }>(`referrers|${key}`,
    () => sql`SELECT t.id FROM ${sql.table(other.table)} AS t WHERE ${where} ORDER BY t.id`, values);
  const referring = rows.map((r) => Number(r.id));
  if (rule === 'cascade') await removeRecords(tx, tx.ctx.catalog.resource(other.name)!, referring);
  else await clearReference(tx, other, field, referring);
}

/** Sets a reference of the records `ids` to NULL (audited), as the engine's own cleanup: no hooks run. */
export async function clearReference(tx: WriteTx, def: ResourceDef, field: FieldDef, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const { hooks } = tx.shape;
  const column = sql.ref(`t.${columnOf(field)}`);
  const values = idValues(tx, ids);
  const key = `${def.name}.${field.name}`;
  const { inIds } = hooks;
  await tx.flushAudit();
  await tx.run(`clear-audit|${key}`, () => auditSelect(tx.shape, def, 'update', {
    olddata: sql`(${sql.lit(`{${JSON.stringify(field.name)}:`)} || ${hooks.jsonValue(field.type, column)} || '}')`,
    newdata: sql.lit(`{${JSON.stringify(field.name)}:null}`), where: amongIds(tx),
  }), values);
  await tx.run(`clear|${key}`, () => sql`UPDATE ${sql.table(def.table)} SET ${setList([[field, sql`NULL`], ...bookkeeping(def, sql`${PARAMS.now}`)])}
    WHERE ${inIds(sql.ref('id'), IDS)}`, values);
}
