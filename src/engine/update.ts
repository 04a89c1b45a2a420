// POST: every matched record gets the body's values. Where a resource
// has no per-record hook, the change is set-based: one INSERT … SELECT writes the
// audit entries of exactly the records whose stored values change, then one
// UPDATE changes them — the same few statements for 1 record or 5,000.
// `records_updated` counts the records whose stored values actually changed.
import { sql } from 'kysely';
import type { Sql } from '../model/dialect.ts';
import { Param } from '../db/statements.ts';
import { accessDenied, filterRequired, invalidValue } from '../errors.ts';
import type { JsonObject } from '../model/json.ts';
import type { FieldDef, ResourceDef, Row } from '../model/types.ts';
import { auditSelect, fieldsJson, recordEntry, storedFields, valueJson } from './audit.ts';
import { checkPrecondition, readIfMatch } from './precondition.ts';
import { PARAMS } from './params.ts';
import { columnOf } from './select.ts';
import { alreadyInUse, checkReferences, checkUnique, placing, readBody } from './checks.ts';
import { bookkeeping, byIds, inWriteTx, matchIds, matchSet, rowsOf, setList } from './write.ts';
import type { Ctx, Derived, Matched, Query, Reply, Resource, UpdateResult, WriteTx } from './types.ts';

/** POST: `ifMatch` is the If-Match header; `answer` makes the reply kept with the write. */
export async function updateRecords(ctx: Ctx, res: Resource, query: Query, body: JsonObject, ifMatch?: string,
  answer?: (r: UpdateResult) => Reply): Promise<UpdateResult> {
  if (query.conditions.length === 0) throw filterRequired(res.def.name, 'POST');
  const changes = readBody(ctx, res, body, 'update');
  checkFieldAccess(ctx, res.def, changes);
  const pre = readIfMatch(ifMatch);
  return inWriteTx(ctx, async (tx) => {
    if (!rowWise(res)) {
      const matched = await matchSet(tx, res.def, query);
      if (pre) await checkPrecondition(tx, res.def, query, matched, pre);
      return { updated: await updateSet(tx, res, matched, changes), found: matched.count };
    }
    const ids = await matchIds(tx, res.def, query);
    if (pre) await checkPrecondition(tx, res.def, query, byIds(tx, ids), pre);
    let updated = 0;
    for (const row of await rowsOf(tx, res.def, ids)) updated += Number(await updateRecord(tx, res, row, { ...changes }));
    return { updated, found: ids.length };
  }, answer);
}

/** A session below admin may POST only the fields the resource opens to it (`userPost`). */
function checkFieldAccess(ctx: Ctx, def: ResourceDef, changes: Row): void {
  const { level } = ctx.principal;
  if (level === 'basic' || level === 'admin' || !def.userPost) return;
  if (Object.keys(changes).some((k) => !def.userPost!.includes(k))) throw accessDenied('POST', def.name, 'admin');
}

const rowWise = (res: Resource) => !!(res.hooks?.beforeUpdate || res.hooks?.afterUpdate);

/** Applies `changes` to one stored record; false when nothing actually changed. */
export async function updateRecord(tx: WriteTx, res: Resource, old: Row, changes: Row): Promise<boolean> {
  const { def } = res;
  await checkReferences(tx, def, { ...old, ...changes }, placing(def, changes));
  // A record that changes company has all its references re-checked, not only the changed ones.
  const moves = changes[def.scopeColumn] !== undefined && changes[def.scopeColumn] !== old[def.scopeColumn];
  if (!rowWise(res)) {
    const next = { ...old, ...changes };
    if (moves) await checkReferences(tx, def, next, def.fields);
    await checkUnique(tx, def, next, Number(old.id), Object.keys(changes).filter((k) => changes[k] !== old[k]));
    return (await updateSet(tx, res, byIds(tx, [Number(old.id)]), changes)) > 0;
  }
  await res.hooks?.beforeUpdate?.(tx, old, changes);
  const changed = storedFields(def).filter((f) => changes[f.name] !== undefined && changes[f.name] !== old[f.name]);
  if (changed.length === 0) return false;
  const next: Row = { ...old };
  for (const f of changed) next[f.name] = changes[f.name]!;
  await checkReferences(tx, def, next, moves ? def.fields : changed);
  await checkUnique(tx, def, next, Number(old.id), changed.map((f) => f.name));
  for (const f of def.fields) if (f.touch) next[f.name] = tx.now;
  const sets = [...changed.map((f): [FieldDef, Sql] => [f, sql`${next[f.name]}`]), ...bookkeeping(def, sql`${tx.now}`)];
  await sql`UPDATE ${sql.table(def.table)} SET ${setList(sets)} WHERE id = ${old.id}`.execute(tx.db);
  tx.audit(recordEntry(def, 'update', next, fieldsJson(changed, old), fieldsJson(changed, next)));
  await res.hooks?.afterUpdate?.(tx, old, next);
  return true;
}

interface Assignment {
  readonly field: FieldDef;
  /** The new value over the stored record at alias `t`. */
  readonly value: Sql;
  /** Its JSON text (for the audit entry's newdata). */
  readonly json: Sql;
  /** The stored value differs from the new one. */
  readonly differs: Sql;
}

const castType = (f: FieldDef) => (f.type === 'int' || f.type === 'bool' ? 'int' : f.type === 'json' ? 'json' : 'text');

const member = (name: string, json: Sql) => sql`(${sql.lit(`${JSON.stringify(name)}:`)} || ${json} || ',')`;

/** `{…}` of the members whose `differs` holds for the row. */
function changedJson(items: readonly Assignment[], json: (a: Assignment) => Sql): Sql {
  const members = items.map((a) => sql`(CASE WHEN ${a.differs} THEN ${member(a.field.name, json(a))} ELSE '' END)`);
  return sql`('{' || rtrim(${sql.join(members, sql` || `)}, ',') || '}')`;
}

/** The set-based update of the matched records; returns how many changed. */
async function updateSet(tx: WriteTx, res: Resource, matched: Matched, changes: Row): Promise<number> {
  const { def } = res;
  const derived: Derived | null = res.hooks?.derive?.(tx, changes) ?? null;
  const fields = storedFields(def).filter((f) => changes[f.name] !== undefined || derived?.field === f.name);
  if (matched.count === 0 || fields.length === 0) return 0;
  await checkSetReferences(tx, def, matched, changes);
  const { hooks } = tx.shape;
  const values: Record<string, unknown> = { ...matched.values, ...derived?.values };
  const items = fields.map((field): Assignment => {
    const stored = sql.ref(`t.${columnOf(field)}`);
    if (derived?.field === field.name) {
      return { field, value: derived.expr, json: hooks.jsonValue(field.type, derived.expr), differs: hooks.differs(stored, derived.expr, field.type) };
    }
    values[`v_${field.name}`] = changes[field.name];
    values[`j_${field.name}`] = valueJson(field.type, changes[field.name]);
    const value = hooks.cast(new Param(`v_${field.name}`), castType(field));
    return { field, value, json: hooks.cast(new Param(`j_${field.name}`), 'text'), differs: hooks.differs(stored, value, field.type) };
  });
  const key = `${def.name}|${fields.map((f) => f.name).join(',')}|${derived?.key ?? ''}|${matched.key}`;
  const changing = sql`${matched.where} AND (${sql.join(items.map((a) => a.differs), sql` OR `)})`;
  await tx.flushAudit();
  await tx.run(`update-audit|${key}`, () => auditSelect(tx.shape, def, 'update', {
    olddata: changedJson(items, (a) => hooks.jsonValue(a.field.type, sql.ref(`t.${columnOf(a.field)}`))),
    newdata: changedJson(items, (a) => a.json), where: changing,
  }), values);
  try {
    const { changes: n } = await tx.run(`update|${key}`, () => sql`UPDATE ${sql.table(def.table)} AS t
      SET ${setList([...items.map((a): [FieldDef, Sql] => [a.field, a.value]), ...bookkeeping(def, sql`${PARAMS.now}`)])} WHERE ${changing}`, values);
    return n;
  } catch (error) {
    const unique = def.unique?.find((columns) => columns.some((c) => changes[c] !== undefined));
    if (unique && tx.shape.hooks.isUniqueViolation(error)) throw alreadyInUse(def, unique, changes);
    throw error;
  }
}

/**
 * The set-based form of checkReferences: a referenced record must be visible,
 * and of the company of every record that would change to refer to it.
 */
async function checkSetReferences(tx: WriteTx, def: ResourceDef, matched: Matched, changes: Row): Promise<void> {
  for (const f of def.fields) {
    const value = changes[f.name];
    if (!f.references || value === null || value === undefined) continue;
    const target = tx.ctx.catalog.lookup(f.references.resource);
    const found = await tx.find(target, Number(value));
    if (!found) throw invalidValue(f.name);
    if (f.references.rule !== 'same-company') continue;
    const column = sql.ref(`t.${columnOf(f)}`);
    const ref = tx.shape.hooks.cast(new Param('ref'), 'int');
    const { rows } = await tx.run(`foreign|${def.name}|${f.name}|${matched.key}`, () => sql`SELECT t.id FROM ${sql.table(def.table)} AS t
      WHERE ${matched.where} AND ${sql.ref(`t.${def.scopeColumn}`)} <> ${tx.shape.hooks.cast(new Param('company'), 'int')}
      AND ${tx.shape.hooks.differs(column, ref, f.type)} LIMIT 1`, { ...matched.values, ref: value, company: found[target.scopeColumn] });
    if (rows.length > 0) throw invalidValue(f.name);
  }
}
