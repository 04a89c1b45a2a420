// The write transaction and PUT. Each request is one transaction: every matched
// record changes or none does, and its audit entries commit with it.
import { sql } from 'kysely';
import { execute } from '../db/database.ts';
import type { Sql } from '../model/dialect.ts';
import { Param } from '../db/statements.ts';
import { dataError } from '../errors.ts';
import type { JsonObject } from '../model/json.ts';
import type { FieldDef, ResourceDef, Row } from '../model/types.ts';
import { insertAudit } from './audit.ts';
import { shapeOf } from './context.ts';
import { insertRecords, readCreates } from './create.ts';
import { requestValues } from './params.ts';
import { columnOf, joinClause, relationsOf, visible, whereClause } from './select.ts';
import { queryShape } from './shape.ts';
import type { AuditEntry, Ctx, Matched, Query, Reply, Resource, WriteTx } from './types.ts';

/** A transaction that lost a deadlock or serialization conflict is run again, up to this many times. */
const ATTEMPTS = 3;

const ID = new Param('id');
const IDS = new Param('ids');

/**
 * Runs `fn` in one transaction with the request's clock reading and audit buffer.
 * With `answer`, the request's reply to the outcome is sealed (ctx.seal: kept for
 * its Idempotency-Key) in the same transaction.
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

/** PUT: the records of the body, created in one transaction; their ids in the body's order. */
export async function createRecords(ctx: Ctx, res: Resource, items: readonly JsonObject[], answer?: (ids: number[]) => Reply): Promise<number[]> {
  const records = readCreates(ctx, res, items);
  return inWriteTx(ctx, (tx) => insertRecords(tx, res, records), answer);
}

/** What every change to a record sets besides its values: `modified` to `now`, `version` to one more. */
export const bookkeeping = (def: ResourceDef, now: Sql): [FieldDef, Sql][] => def.fields.flatMap((f): [FieldDef, Sql][] =>
  (f.touch ? [[f, now]] : f.counter ? [[f, sql`${sql.ref(columnOf(f))} + 1`]] : []));

/** `SET col = …` items of an UPDATE, in the definition's order. */
export const setList = (items: readonly [FieldDef, Sql][]) =>
  sql.join(items.map(([f, v]) => sql`${sql.ref(columnOf(f))} = ${v}`));
