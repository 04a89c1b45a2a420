// PUT, POST and DELETE. Each request is one transaction: every matched record
// changes or none does, and its audit entries commit with it (spec §6, §8.4).
import { sql } from 'kysely';
import { accessDenied, dataError, filterRequired, invalidValue, tooMany } from '../errors.ts';
import { formatDate, formatDatetime } from '../model/dates.ts';
import type { JsonObject } from '../model/json.ts';
import type { FieldDef, ResourceDef, Row, SqlValue } from '../model/types.ts';
import { type AuditEntry, fieldsJson, insertAudit, recordEntry, storedFields } from './audit.ts';
import { readFields } from './body.ts';
import { type Ctx, scopeOf } from './context.ts';
import type { Query } from './query.ts';
import type { Resource, WriteTx } from './resource.ts';
import { joinClause, relationsOf, visible, whereClause } from './select.ts';
import { removeRecords } from './remove.ts';

/** A transaction that lost a deadlock or serialization conflict is run again, up to this many times. */
const ATTEMPTS = 3;

/** Runs `fn` in one transaction with the request's clock reading and audit buffer. */
export async function inWriteTx<T>(ctx: Ctx, fn: (tx: WriteTx) => Promise<T>): Promise<T> {
  const t = ctx.clock.now();
  for (let attempt = 1; ; attempt++) {
    const committed: (() => Promise<void>)[] = [];
    try {
      const result = await ctx.database.transaction(async (db) => {
        const entries: AuditEntry[] = [];
        const heirs = new Map<number, number>();
        const tx: WriteTx = {
          ctx, db, now: formatDatetime(t), today: formatDate(t),
          find: (def, id) => findInScope(ctx, db, def, id),
          create: (name, values) => insertRecord(tx, resourceOf(ctx, name), values),
          audit: (e) => entries.push(e),
          passAudit: async (map) => {
            for (const [from, to] of map) {
              heirs.set(from, to);
              await db.updateTable('auditlog').set({ company_id: to }).where('company_id', '=', from).execute();
            }
          },
          afterCommit: (f) => committed.push(f),
        };
        const value = await fn(tx);
        await insertAudit(ctx, db, tx.now, heirs.size === 0 ? entries
          : entries.map((e) => (e.companyId !== null && heirs.has(e.companyId) ? { ...e, companyId: heirs.get(e.companyId)! } : e)));
        return value;
      });
      for (const f of committed) await f();
      return result;
    } catch (error) {
      const { hooks } = ctx.database;
      if (hooks.isTransient(error) && attempt < ATTEMPTS) continue;
      // A race the pre-checks could not see (another transaction committed first).
      if (hooks.isUniqueViolation(error)) throw dataError('a unique value is already in use');
      if (hooks.isForeignKeyViolation(error)) throw dataError('a referenced record changed; nothing was written');
      throw error;
    }
  }
}

function resourceOf(ctx: Ctx, name: string): Resource {
  const r = ctx.catalog.resource(name);
  if (!r) throw new Error(`unknown resource ${name}`);
  return r;
}

async function findInScope(ctx: Ctx, db: WriteTx['db'], def: ResourceDef, id: number): Promise<Row | null> {
  const { rows } = await sql<Row>`${scopeOf(ctx).with} SELECT t.* FROM ${sql.table(def.table)} AS t
    WHERE t.id = ${id} AND ${visible(ctx, def, 't')}`.execute(db);
  return rows[0] ?? null;
}

// ---- PUT ----------------------------------------------------------------------

export async function createRecords(ctx: Ctx, res: Resource, items: readonly JsonObject[]): Promise<number[]> {
  if (items.length > ctx.limits.maxBatch) throw tooMany(items.length, ctx.limits.maxBatch);
  const records = items.map((o) => readBody(ctx, res, o, 'create'));
  return inWriteTx(ctx, async (tx) => {
    const ids: number[] = [];
    for (const r of records) ids.push(await insertRecord(tx, res, r));
    return ids;
  });
}

/** A body's fields, checked against the definition and the resource's own rules. */
function readBody(ctx: Ctx, res: Resource, body: JsonObject, mode: 'create' | 'update'): Row {
  const values = readFields(res.def, body, mode, ctx.limits);
  res.hooks?.validate?.(ctx, values, mode);
  return values;
}

/**
 * Where a record is placed (its company, its parent company) is checked before
 * any hook reads about that place, so that no answer tells a company outside the
 * scope apart from a missing one (spec §3).
 */
const placing = (def: ResourceDef, values: Row) =>
  def.fields.filter((f) => f.references?.rule === 'in-scope' && values[f.name] !== undefined);

export async function insertRecord(tx: WriteTx, res: Resource, values: Row): Promise<number> {
  const { def } = res;
  const record = withDefaults(tx, def, values);
  await checkReferences(tx, def, record, placing(def, values));
  await res.hooks?.beforeCreate?.(tx, record);
  for (const f of def.fields) {
    if (f.required && (record[f.name] === undefined || record[f.name] === null)) throw invalidValue(f.name);
  }
  await checkReferences(tx, def, record, def.fields);
  await checkUnique(tx, def, record, null, Object.keys(record));
  await res.hooks?.beforeInsert?.(tx, record);
  const columns = Object.keys(record);
  const { rows } = await sql<{ id: number }>`INSERT INTO ${sql.table(def.table)} (${sql.join(columns.map((c) => sql.ref(c)))})
    VALUES (${sql.join(columns.map((c) => record[c]))}) RETURNING id`.execute(tx.db);
  const id = Number(rows[0]!.id);
  const created = { ...record, id };
  tx.audit(recordEntry(def, 'create', created, '{}', fieldsJson(storedFields(def).filter((f) => f.name in created), created)));
  return id;
}

function withDefaults(tx: WriteTx, def: ResourceDef, values: Row): Row {
  const record: Row = { ...values };
  for (const f of def.fields) {
    if (f.touch) record[f.name] = tx.now;
    else if (record[f.name] === undefined && f.default !== undefined) {
      record[f.name] = f.default === 'now' ? tx.now : f.default === 'today' ? tx.today : f.default;
    }
  }
  if (def.scopeColumn !== 'id' && record[def.scopeColumn] === undefined) record[def.scopeColumn] = tx.ctx.principal.companyId;
  return record;
}

/**
 * Every id a record refers to must be a record the caller can see, and (for
 * 'same-company' references) of the record's own company (spec §3).
 */
export async function checkReferences(tx: WriteTx, def: ResourceDef, record: Row, fields: readonly FieldDef[]): Promise<void> {
  for (const f of fields) {
    const value = record[f.name];
    if (!f.references || value === null || value === undefined) continue;
    const target = tx.ctx.catalog.lookup(f.references.resource);
    const found = await tx.find(target, Number(value));
    if (!found) throw invalidValue(f.name);
    if (f.references.rule === 'same-company' && found[target.scopeColumn] !== record[def.scopeColumn]) throw invalidValue(f.name);
  }
}

async function checkUnique(tx: WriteTx, def: ResourceDef, record: Row, selfId: number | null, changed: readonly string[]): Promise<void> {
  for (const columns of def.unique ?? []) {
    if (!columns.some((c) => changed.includes(c)) || columns.some((c) => record[c] === null || record[c] === undefined)) continue;
    const same = columns.map((c) => sql`${sql.ref(c)} = ${record[c]}`);
    if (selfId !== null) same.push(sql`id <> ${selfId}`);
    const { rows } = await sql`SELECT id FROM ${sql.table(def.table)} WHERE ${sql.join(same, sql` AND `)} LIMIT 1`.execute(tx.db);
    const last = columns[columns.length - 1]!;
    if (rows.length > 0) throw dataError(`${def.name} ${last} ${JSON.stringify(record[last])} is already in use`);
  }
}

// ---- POST ---------------------------------------------------------------------

export interface UpdateResult { readonly updated: number; readonly found: number }

export async function updateRecords(ctx: Ctx, res: Resource, query: Query, body: JsonObject): Promise<UpdateResult> {
  if (query.conditions.length === 0) throw filterRequired(res.def.name, 'POST');
  const changes = readBody(ctx, res, body, 'update');
  checkFieldAccess(ctx, res.def, changes);
  return inWriteTx(ctx, async (tx) => {
    const rows = await matchRows(tx, res.def, query);
    let updated = 0;
    for (const row of rows) if (await updateRecord(tx, res, row, { ...changes })) updated++;
    return { updated, found: rows.length };
  });
}

/** A session below admin may POST only the fields the resource opens to it (`userPost`). */
function checkFieldAccess(ctx: Ctx, def: ResourceDef, changes: Row): void {
  const { level } = ctx.principal;
  if (level === 'basic' || level === 'admin' || !def.userPost) return;
  if (Object.keys(changes).some((k) => !def.userPost!.includes(k))) throw accessDenied('POST', def.name, 'admin');
}

/** Applies `changes` to one stored record; false when nothing actually changed. */
export async function updateRecord(tx: WriteTx, res: Resource, old: Row, changes: Row): Promise<boolean> {
  const { def } = res;
  await checkReferences(tx, def, { ...old, ...changes }, placing(def, changes));
  await res.hooks?.beforeUpdate?.(tx, old, changes);
  const changed = storedFields(def).filter((f) => changes[f.name] !== undefined && changes[f.name] !== old[f.name]);
  if (changed.length === 0) return false;
  const next: Row = { ...old };
  for (const f of changed) next[f.name] = changes[f.name]!;
  // A record that changes company has all its references re-checked (spec §3), not only the changed ones.
  await checkReferences(tx, def, next, changed.some((f) => f.name === def.scopeColumn) ? def.fields : changed);
  await checkUnique(tx, def, next, Number(old.id), changed.map((f) => f.name));
  const sets: [string, SqlValue][] = changed.map((f) => [f.name, next[f.name]!]);
  for (const f of def.fields) if (f.touch) { next[f.name] = tx.now; sets.push([f.name, tx.now]); }
  await sql`UPDATE ${sql.table(def.table)} SET ${sql.join(sets.map(([c, v]) => sql`${sql.ref(c)} = ${v}`))}
    WHERE id = ${old.id}`.execute(tx.db);
  tx.audit(recordEntry(def, 'update', next, fieldsJson(changed, old), fieldsJson(changed, next)));
  await res.hooks?.afterUpdate?.(tx, old, next);
  return true;
}

/** The records a POST or DELETE acts on, locked for the rest of the transaction. */
export async function matchRows(tx: WriteTx, def: ResourceDef, query: Query): Promise<Row[]> {
  const { ctx } = tx;
  const { rows } = await sql<Row>`${scopeOf(ctx).with} SELECT t.* FROM ${sql.table(def.table)} AS t
    ${joinClause(ctx, def, relationsOf(query.conditions))} WHERE ${whereClause(ctx, def, query.conditions)}
    ORDER BY t.id ${ctx.database.hooks.lockMatched}`.execute(tx.db);
  return rows;
}

// ---- DELETE -------------------------------------------------------------------

export interface DeleteResult { readonly deleted: number; readonly found: number }

export async function deleteRecords(ctx: Ctx, res: Resource, query: Query): Promise<DeleteResult> {
  if (query.conditions.length === 0) throw filterRequired(res.def.name, 'DELETE');
  return inWriteTx(ctx, async (tx) => {
    const rows = await matchRows(tx, res.def, query);
    await removeRecords(tx, res, rows);
    return { deleted: rows.length, found: rows.length };
  });
}
