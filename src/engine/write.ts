// The write transaction and PUT. Each request is one transaction: every matched
// record changes or none does, and its audit entries commit with it (spec §6, §8.4).
import { sql } from 'kysely';
import { execute } from '../db/database.ts';
import type { Sql } from '../db/dialect.ts';
import { Param, type Values } from '../db/statements.ts';
import { dataError, invalidValue, tooMany } from '../errors.ts';
import type { JsonObject } from '../model/json.ts';
import type { FieldDef, ResourceDef, Row } from '../model/types.ts';
import { type AuditEntry, fieldsJson, insertAudit, recordEntry, storedFields } from './audit.ts';
import { readFields } from './body.ts';
import { type Ctx, shapeOf } from './context.ts';
import type { Reply } from './endpoint.ts';
import { requestValues } from './params.ts';
import type { Query } from './query.ts';
import type { Resource, WriteTx } from './resource.ts';
import { columnOf, joinClause, relationsOf, visible, whereClause } from './select.ts';
import { queryShape } from './shape.ts';

/** A transaction that lost a deadlock or serialization conflict is run again, up to this many times. */
const ATTEMPTS = 3;

const ID = new Param('id');
const IDS = new Param('ids');

/**
 * Runs `fn` in one transaction with the request's clock reading and audit buffer.
 * With `answer`, the request's reply to the outcome is sealed (ctx.seal: kept for
 * its Idempotency-Key, spec §14.1) in the same transaction.
 */
export async function inWriteTx<T>(ctx: Ctx, fn: (tx: WriteTx) => Promise<T>, answer?: (value: T) => Reply): Promise<T> {
  const values = requestValues(ctx);
  const shape = shapeOf(ctx);
  for (let attempt = 1; ; attempt++) {
    const committed: (() => Promise<void>)[] = [];
    try {
      const result = await ctx.database.transaction(async (db) => {
        let entries: AuditEntry[] = [];
        const heirs = new Map<number, number>();
        const run: WriteTx['run'] = (key, build, extra) =>
          execute(db, ctx.database.statements.get(`${shape.level}|${key}`, build), extra ? { ...values, ...extra } : values);
        const tx: WriteTx = {
          ctx, db, shape, values, run, now: String(values.now), today: String(values.today),
          find: async (def, id) => (await run<Row>(`find|${def.name}`, () => findSql(tx, def), { id })).rows[0] ?? null,
          create: async (name, record) => (await insertRecords(tx, resourceOf(ctx, name), [record]))[0]!,
          audit: (e) => entries.push(e),
          async flushAudit() {
            const batch = entries;
            entries = [];
            await insertAudit(ctx, db, tx.now, batch);
          },
          passAudit: (map) => { for (const [from, to] of map) heirs.set(from, to); },
          afterCommit: (f) => committed.push(f),
        };
        const value = await fn(tx);
        await tx.flushAudit();
        // A deleted company's log, its deletion included, passes to its heir.
        for (const [from, to] of heirs) {
          await db.updateTable('auditlog').set({ company_id: to }).where('company_id', '=', from).execute();
          // Its events (webhooks not yet told) are routed through the heir's tree.
          await db.updateTable('events').set({ scope_id: to }).where('scope_id', '=', from).execute();
        }
        if (answer && ctx.seal) await ctx.seal(db, answer(value));
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

const findSql = (tx: WriteTx, def: ResourceDef) =>
  sql`SELECT t.* FROM ${sql.table(def.table)} AS t WHERE t.id = ${ID} AND ${visible(tx.shape, def, 't', 'probe')}`;

/** The ids of the records a POST or DELETE acts on, ascending, locked for the rest of the transaction. */
export async function matchIds(tx: WriteTx, def: ResourceDef, query: Query): Promise<number[]> {
  const q = queryShape(query);
  const s = tx.shape;
  const { rows } = await tx.run<{ id: number }>(`match|${def.name}|${q.where}`, () => sql`SELECT t.id AS id FROM ${sql.table(def.table)} AS t
    ${joinClause(s, def, relationsOf(q.conditions))} WHERE ${whereClause(s, def, q.conditions)} ORDER BY t.id ${s.hooks.lockMatched}`, q.values);
  return rows.map((r) => Number(r.id));
}

/** The records a set-based write acts on: a condition on alias `t`, its values, and how many there are. */
export interface Matched {
  readonly count: number;
  /** Part of the key of every statement that uses `where`. */
  readonly key: string;
  readonly where: Sql;
  readonly values: Values;
}

/**
 * The matched records as a set: the filter itself where writes run alone
 * (no ids travel to the service and back), else their ids, locked.
 */
export async function matchSet(tx: WriteTx, def: ResourceDef, query: Query): Promise<Matched> {
  const s = tx.shape;
  if (!s.hooks.writesAlone) return byIds(tx, await matchIds(tx, def, query));
  const q = queryShape(query);
  const joined = relationsOf(q.conditions);
  const where = whereClause(s, def, q.conditions);
  const filtered = joined.size === 0 ? where
    : sql`t.id IN (SELECT t.id FROM ${sql.table(def.table)} AS t ${joinClause(s, def, joined)} WHERE ${where})`;
  const { rows } = await tx.run<{ n: number }>(`match-count|${def.name}|${q.where}`,
    () => sql`SELECT COUNT(*) AS n FROM ${sql.table(def.table)} AS t WHERE ${filtered}`, q.values);
  return { count: Number(rows[0]!.n), key: `filter:${q.where}`, where: filtered, values: q.values };
}

export const byIds = (tx: WriteTx, ids: readonly number[]): Matched =>
  ({ count: ids.length, key: 'ids', where: amongIds(tx), values: idValues(tx, ids) });

/** `t.id` is one of the ids bound as `ids` (see `idValues`). */
export const amongIds = (tx: WriteTx, alias = 't') => tx.shape.hooks.inIds(sql.ref(`${alias}.id`), IDS);
export const idValues = (tx: WriteTx, ids: readonly number[]) => ({ ids: tx.shape.hooks.idList(ids) });

/** The stored records with these ids, ascending. */
export async function rowsOf(tx: WriteTx, def: ResourceDef, ids: readonly number[]): Promise<Row[]> {
  if (ids.length === 0) return [];
  return (await tx.run(`rows|${def.name}`, () => sql`SELECT t.* FROM ${sql.table(def.table)} AS t WHERE ${amongIds(tx)} ORDER BY t.id`,
    idValues(tx, ids))).rows;
}


// ---- PUT ----------------------------------------------------------------------

export async function createRecords(ctx: Ctx, res: Resource, items: readonly JsonObject[], answer?: (ids: number[]) => Reply): Promise<number[]> {
  const records = readCreates(ctx, res, items);
  return inWriteTx(ctx, (tx) => insertRecords(tx, res, records), answer);
}

/** The records a PUT creates, each checked against the definition (at most maxBatch). */
export function readCreates(ctx: Ctx, res: Resource, items: readonly JsonObject[]): Row[] {
  if (items.length > ctx.limits.maxBatch) throw tooMany(items.length, ctx.limits.maxBatch);
  return items.map((o) => readBody(ctx, res, o, 'create'));
}

/** A body's fields, checked against the definition and the resource's own rules. */
export function readBody(ctx: Ctx, res: Resource, body: JsonObject, mode: 'create' | 'update'): Row {
  const values = readFields(res.def, body, mode, ctx.limits);
  res.hooks?.validate?.(ctx, values, mode);
  return values;
}

/**
 * Where a record is placed (its company, its parent company) is checked before
 * any hook reads about that place, so that no answer tells a company outside the
 * scope apart from a missing one (spec §3).
 */
export const placing = (def: ResourceDef, values: Row) =>
  def.fields.filter((f) => f.references?.rule === 'in-scope' && values[f.name] !== undefined);

/** Checks and inserts records in their order; returns their ids in the same order. */
export async function insertRecords(tx: WriteTx, res: Resource, items: readonly Row[]): Promise<number[]> {
  const batch = new NewRecords(tx, res);
  for (const values of items) await batch.check(values);
  return batch.insert();
}

/** New records of one write: each checked against the store and the records before it, then inserted together. */
export class NewRecords {
  private readonly found: Find;
  private readonly records: Row[] = [];
  constructor(private readonly tx: WriteTx, private readonly res: Resource) {
    this.found = memoFind(tx);
  }

  /** Checks one record (throws its refusal); once it passes, it is among those `insert` writes. */
  async check(values: Row): Promise<void> {
    const { tx, res, found } = this;
    const { def } = res;
    const record = withDefaults(tx, def, values);
    await checkReferences(tx, def, record, placing(def, values), found);
    await res.hooks?.beforeCreate?.(tx, record);
    for (const f of def.fields) {
      if (f.required && (record[f.name] === undefined || record[f.name] === null)) throw invalidValue(f.name);
    }
    await checkReferences(tx, def, record, def.fields, found);
    await checkUnique(tx, def, record, null, Object.keys(record), this.records);
    await res.hooks?.beforeInsert?.(tx, record);
    this.records.push(record);
  }

  get count(): number { return this.records.length; }

  /** Inserts the checked records, audited; their ids in the same order. */
  async insert(): Promise<number[]> {
    const { tx, res: { def }, records } = this;
    const ids: number[] = [];
    for (const run of sameColumns(records)) ids.push(...await insertRun(tx, def, run));
    records.forEach((record, i) => {
      const created = { ...record, id: ids[i]! };
      tx.audit(recordEntry(def, 'create', created, '{}', fieldsJson(storedFields(def).filter((f) => f.name in created), created)));
    });
    return ids;
  }
}

/** Consecutive records with the same columns, at most 100 to a statement. */
function* sameColumns(records: readonly Row[]): Generator<Row[]> {
  let run: Row[] = [];
  const columnsOf = (r: Row) => Object.keys(r).join(',');
  for (const r of records) {
    if (run.length > 0 && (run.length === 100 || columnsOf(run[0]!) !== columnsOf(r))) { yield run; run = []; }
    run.push(r);
  }
  if (run.length > 0) yield run;
}

/** One multi-row INSERT. Ids are assigned in row order, so ascending ids are the rows' ids in order. */
async function insertRun(tx: WriteTx, def: ResourceDef, rows: readonly Row[]): Promise<number[]> {
  const columns = Object.keys(rows[0]!);
  const { rows: out } = await sql<{ id: number }>`INSERT INTO ${sql.table(def.table)} (${sql.join(columns.map((c) => sql.ref(c)))})
    VALUES ${sql.join(rows.map((r) => sql`(${sql.join(columns.map((c) => r[c]))})`))} RETURNING id`.execute(tx.db);
  return out.map((r) => Number(r.id)).sort((a, b) => a - b);
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

type Find = (def: ResourceDef, id: number) => Promise<Row | null>;

/** tx.find, remembering answers for one batch (many new records name the same few). */
function memoFind(tx: WriteTx): Find {
  const seen = new Map<string, Promise<Row | null>>();
  return (def, id) => {
    const key = `${def.name}:${id}`;
    let found = seen.get(key);
    if (!found) seen.set(key, (found = tx.find(def, id)));
    return found;
  };
}

/**
 * Every id a record refers to must be a record the caller can see, and (for
 * 'same-company' references) of the record's own company (spec §3).
 */
export async function checkReferences(tx: WriteTx, def: ResourceDef, record: Row, fields: readonly FieldDef[], find: Find = tx.find): Promise<void> {
  for (const f of fields) {
    const value = record[f.name];
    if (!f.references || value === null || value === undefined) continue;
    const target = tx.ctx.catalog.lookup(f.references.resource);
    const found = await find(target, Number(value));
    if (!found) throw invalidValue(f.name);
    if (f.references.rule === 'same-company' && found[target.scopeColumn] !== record[def.scopeColumn]) throw invalidValue(f.name);
  }
}

export const alreadyInUse = (def: ResourceDef, columns: readonly string[], record: Row) => {
  const last = columns[columns.length - 1]!;
  return dataError(`${def.name} ${last} ${JSON.stringify(record[last])} is already in use`);
};

/** Unique values (spec §6): against the stored records and the records of the same batch before this one. */
export async function checkUnique(tx: WriteTx, def: ResourceDef, record: Row, selfId: number | null, changed: readonly string[],
  batch: readonly Row[] = []): Promise<void> {
  for (const columns of def.unique ?? []) {
    if (!columns.some((c) => changed.includes(c)) || columns.some((c) => record[c] === null || record[c] === undefined)) continue;
    if (batch.some((r) => columns.every((c) => r[c] === record[c]))) throw alreadyInUse(def, columns, record);
    const values = Object.fromEntries(columns.map((c, i) => [`u${i}`, record[c]]));
    const same = columns.map((c, i) => sql`${sql.ref(c)} = ${new Param(`u${i}`)}`);
    const { rows } = await tx.run(`unique|${def.name}|${columns.join(',')}`,
      () => sql`SELECT id FROM ${sql.table(def.table)} WHERE ${sql.join(same, sql` AND `)} AND id <> ${ID} LIMIT 1`,
      { ...values, id: selfId ?? 0 });
    if (rows.length > 0) throw alreadyInUse(def, columns, record);
  }
}

/** What every change to a record sets besides its values: `modified` to `now`, `version` to one more (spec §14.2). */
export const bookkeeping = (def: ResourceDef, now: Sql): [FieldDef, Sql][] => def.fields.flatMap((f): [FieldDef, Sql][] =>
  (f.touch ? [[f, now]] : f.counter ? [[f, sql`${sql.ref(columnOf(f))} + 1`]] : []));

/** `SET col = …` items of an UPDATE, in the definition's order. */
export const setList = (items: readonly [FieldDef, Sql][]) =>
  sql.join(items.map(([f, v]) => sql`${sql.ref(columnOf(f))} = ${v}`));
