// The checks a new or changed record passes before it is written: its body's fields,
// the records it refers to, its unique values.
import { sql } from 'kysely';
import { Param } from '../db/statements.ts';
import { dataError, invalidValue } from '../errors.ts';
import type { JsonObject } from '../model/json.ts';
import type { FieldDef, ResourceDef, Row } from '../model/types.ts';
import { readFields } from './body.ts';
import type { Ctx, Find, Resource, WriteTx } from './types.ts';

const ID = new Param('id');

/** A body's fields, checked against the definition and the resource's own rules. */
export function readBody(ctx: Ctx, res: Resource, body: JsonObject, mode: 'create' | 'update'): Row {
  const values = readFields(res.def, body, mode, ctx.limits);
  res.hooks?.validate?.(ctx, values, mode);
  return values;
}

/**
 * Where a record is placed (its company, its parent company) is checked before
 * any hook reads about that place, so that no answer tells a company outside the
 * scope apart from a missing one.
 */
export const placing = (def: ResourceDef, values: Row) =>
  def.fields.filter((f) => f.references?.rule === 'in-scope' && values[f.name] !== undefined);

/**
 * Every id a record refers to must be a record the caller can see, and (for
 * 'same-company' references) of the record's own company.
 */
export async function checkReferences(tx: WriteTx, def: ResourceDef, record: Row, fields: readonly FieldDef[], find: Find = tx.find): Promise<void> {
  for (const f of fields) {
    const value = record[f.name];
    if (!f.references || value === null || value === undefined) continue;
    const target = tx.ctx.catalog.lookup(f.references.resource);
    referenceHolds(def, record, f, target, await find(target, Number(value)));
  }
}

/** Refuses the reference of field `f` when `found`, the record of `target` it names, is missing (or not visible) or of another company. */
export function referenceHolds(def: ResourceDef, record: Row, f: FieldDef, target: ResourceDef, found: Row | null): void {
  if (!found) throw invalidValue(f.name);
  if (f.references?.rule === 'same-company' && found[target.scopeColumn] !== record[def.scopeColumn]) throw invalidValue(f.name);
}

export const alreadyInUse = (def: ResourceDef, columns: readonly string[], record: Row) => {
  const last = columns[columns.length - 1]!;
  return dataError(`${def.name} ${last} ${JSON.stringify(record[last])} is already in use`);
};

/** Unique values of a record that changes `changed`, against the stored records. */
export async function checkUnique(tx: WriteTx, def: ResourceDef, record: Row, selfId: number | null, changed: readonly string[]): Promise<void> {
  for (const columns of def.unique ?? []) {
    if (!columns.some((c) => changed.includes(c)) || columns.some((c) => record[c] === null || record[c] === undefined)) continue;
    if (await probeUnique(tx, def, columns, record, selfId)) throw alreadyInUse(def, columns, record);
  }
}

/** Another stored record than `selfId` holds the record's values of `columns`. */
export async function probeUnique(tx: WriteTx, def: ResourceDef, columns: readonly string[], record: Row, selfId: number | null): Promise<boolean> {
  const values = Object.fromEntries(columns.map((c, i) => [`u${i}`, record[c]]));
  const same = columns.map((c, i) => sql`${sql.ref(c)} = ${new Param(`u${i}`)}`);
  const { rows } = await tx.run(`unique|${def.name}|${columns.join(',')}`,
    () => sql`SELECT id FROM ${sql.table(def.table)} WHERE ${sql.join(same, sql` AND `)} AND id <> ${ID} LIMIT 1`,
    { ...values, id: selfId ?? 0 });
  return rows.length > 0;
}
