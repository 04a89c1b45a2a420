// PUT: new records (spec §6), and the rows of a CSV import (spec §14.4). Every record
// is checked in its order — its place, its references, its required fields, its
// unique values against the store and the records before it — and the first refusal
// answers. What the checks ask the store is read for the whole batch at once before
// them (one statement per referenced resource and per unique constraint, not per
// record), so a batch of 1,000 costs a few statements, whatever the table's size;
// the records and their audit entries are then inserted a few hundred to a statement.
import { sql } from 'kysely';
import { Param } from '../db/statements.ts';
import { invalidValue, tooMany } from '../errors.ts';
import { chunks } from '../model/chunks.ts';
import { nextTurn, type Pacer } from '../model/slices.ts';
import type { JsonObject } from '../model/json.ts';
import type { FieldType, ResourceDef, Row } from '../model/types.ts';
import { auditSelect, storedFields } from './audit.ts';
import { objectText } from './record-json.ts';
import { alreadyInUse, checkReferences, placing, probeUnique, readBody } from './checks.ts';
import { visible } from './select.ts';
import type { CheckEvents, Ctx, Find, Resource, WriteTx } from './types.ts';

/** Records to a multi-row INSERT, and ids or unique values to a look-up. */
const ROWS_PER_STATEMENT = 500;
const KEYS_PER_LOOKUP = 1000;
const ROWS = new Param('rows');
const IDS = new Param('ids');

/** The records a PUT creates, each checked against the definition (at most maxBatch). */
export function readCreates(ctx: Ctx, res: Resource, items: readonly JsonObject[]): Row[] {
  if (items.length > ctx.limits.maxBatch) throw tooMany(items.length, ctx.limits.maxBatch);
  return items.map((o) => readBody(ctx, res, o, 'create'));
}

/** Checks and inserts records in their order; returns their ids in the same order. */
export async function insertRecords(tx: WriteTx, res: Resource, items: readonly Row[]): Promise<number[]> {
  const batch = new NewRecords(tx, res);
  return batch.insert(await batch.check(items));
}

/**
 * New records of one write, checked and inserted a batch at a time (a CSV import
 * brings many): each record against the store and every record the write took
 * before it, then inserted together.
 */
export class NewRecords {
  private readonly found: FoundRecords;
  private readonly unique: UniqueValues[];
  /** `pacer`: a long write (a CSV import) gives the event loop turns as it builds its rows. */
  constructor(private readonly tx: WriteTx, private readonly res: Resource, private readonly pacer: Pacer | null = null) {
    this.found = new FoundRecords(tx);
    this.unique = (res.def.unique ?? []).map((columns) => new UniqueValues(tx, res.def, columns));
  }

  /**
   * Checks records in their order, after reading at once what their checks will ask
   * the store (the records their references name, the unique values they would
   * take; only a cache: a value a hook sets later is looked up when its check
   * comes). Returns those that passed, filled in, for `insert`.
   */
  async check(items: readonly Row[], on: CheckEvents = {}): Promise<Row[]> {
    const { tx, res: { def } } = this;
    const records = items.map((values) => withDefaults(tx, def, values));
    for (const f of def.fields) {
      if (!f.references) continue;
      const ids = records.map((r) => r[f.name]).filter((v): v is number => typeof v === 'number');
      await this.found.prefetch(tx.ctx.catalog.lookup(f.references.resource), ids);
    }
    for (const u of this.unique) await u.prefetch(records);
    const passed: Row[] = [];
    for (const [i, record] of records.entries()) {
      on.checking?.(i);
      if (this.pacer?.due()) await nextTurn();
      try {
        await this.checkOne(items[i]!, record);
        passed.push(record);
      } catch (error) {
        if (!on.refused) throw error;
        on.refused(i, error);
      }
    }
    return passed;
  }

  /** One record's checks (throws its refusal); once it passes, its unique values are the write's. */
  private async checkOne(values: Row, record: Row): Promise<void> {
    const { tx, res, found } = this;
    const { def } = res;
    await checkReferences(tx, def, record, placing(def, values), found.find);
    await res.hooks?.beforeCreate?.(tx, record);
    for (const f of def.fields) {
      if (f.required && (record[f.name] === undefined || record[f.name] === null)) throw invalidValue(f.name);
    }
    await checkReferences(tx, def, record, def.fields, found.find);
    for (const u of this.unique) await u.check(record);
    await res.hooks?.beforeInsert?.(tx, record);
    for (const u of this.unique) u.take(record);
  }

  /**
   * Inserts checked records and their audit entries; their ids in the same order.
   * The entries are made by the database from the rows just inserted, one INSERT …
   * SELECT per statement of records (as a set-based update's are), after those the
   * checks had made: no JSON text per record on this thread, none sent to the database.
   */
  async insert(records: readonly Row[]): Promise<number[]> {
    const { tx, res: { def } } = this;
    await tx.flushAudit();
    const ids: number[] = [];
    for (const run of sameColumns(records)) {
      const made = await insertRun(tx, def, run);
      await auditCreated(tx, def, run[0]!, made);
      ids.push(...made);
    }
    await this.res.hooks?.afterInsert?.(tx, records, ids);
    return ids;
  }
}

/** Consecutive records with the same columns, at most ROWS_PER_STATEMENT to a statement. */
function* sameColumns(records: readonly Row[]): Generator<Row[]> {
  let run: Row[] = [];
  let columns = '';
  for (const r of records) {
    const these = Object.keys(r).join(',');
    if (run.length > 0 && (run.length === ROWS_PER_STATEMENT || these !== columns)) { yield run; run = []; }
    columns = these;
    run.push(r);
  }
  if (run.length > 0) yield run;
}

/** A column's type: its field's, or (a column of the resource's own, such as an upload token) what its values are. */
function columnType(def: ResourceDef, column: string, rows: readonly Row[]): FieldType {
  const field = def.fields.find((f) => (f.column ?? f.name) === column);
  if (field) return field.type;
  return rows.some((r) => typeof r[column] === 'number') ? 'int' : 'string';
}

/** One multi-row INSERT. Ids are assigned in row order, so ascending ids are the rows' ids in order. */
async function insertRun(tx: WriteTx, def: ResourceDef, rows: readonly Row[]): Promise<number[]> {
  const columns = Object.keys(rows[0]!);
  const types = columns.map((c) => columnType(def, c, rows));
  const { hooks } = tx.shape;
  const { rows: out } = await tx.run<{ id: number }>(`insert|${def.name}|${columns.join(',')}|${types.join(',')}`,
    () => sql`INSERT INTO ${sql.table(def.table)} (${sql.join(columns.map((c) => sql.ref(c)))})
      ${hooks.selectRows(ROWS, types)} RETURNING id`,
    { rows: hooks.rowList(rows.map((r) => columns.map((c) => r[c]))) });
  return out.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** The audit entries of records just inserted with the columns of `sample`: their fields in newdata, as fieldsJson writes them. */
async function auditCreated(tx: WriteTx, def: ResourceDef, sample: Row, ids: readonly number[]): Promise<void> {
  const fields = storedFields(def).filter((f) => f.name === 'id' || f.name in sample);
  await tx.run(`create-audit|${def.name}|${fields.map((f) => f.name).join(',')}`, () => auditSelect(tx.shape, def, 'create', {
    olddata: sql`'{}'`, newdata: objectText(tx.shape, fields, 't'), where: tx.shape.hooks.inIds(sql.ref('t.id'), IDS),
  }), { ids: tx.shape.hooks.idList(ids) });
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

/** tx.find, answered for one batch from look-ups of many ids at once (many new records name the same few). */
class FoundRecords {
  private readonly seen = new Map<string, Promise<Row | null>>();
  constructor(private readonly tx: WriteTx) {}

  readonly find: Find = (def, id) => {
    const key = `${def.name}:${id}`;
    let found = this.seen.get(key);
    if (!found) this.seen.set(key, (found = this.tx.find(def, id)));
    return found;
  };

  async prefetch(def: ResourceDef, ids: readonly number[]): Promise<void> {
    const { tx } = this;
    const wanted = [...new Set(ids)].filter((id) => !this.seen.has(`${def.name}:${id}`));
    for (const part of chunks(wanted, KEYS_PER_LOOKUP)) {
      const { rows } = await tx.run<Row>(`find-many|${def.name}`, () => sql`SELECT t.* FROM ${sql.table(def.table)} AS t
        WHERE ${tx.shape.hooks.inIds(sql.ref('t.id'), IDS)} AND ${visible(tx.shape, def, 't', 'probe')}`, { ids: tx.shape.hooks.idList(part) });
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      for (const id of part) this.seen.set(`${def.name}:${id}`, Promise.resolve(byId.get(id) ?? null));
    }
  }
}

/** One unique constraint over a batch: the values taken in the store (read for the batch at once) and by the batch's records. */
class UniqueValues {
  private readonly probed = new Set<string>();
  private readonly stored = new Set<string>();
  private readonly batch = new Set<string>();
  constructor(private readonly tx: WriteTx, private readonly def: ResourceDef, private readonly columns: readonly string[]) {}

  /** The record's values as one key, or null when one is missing (no constraint then). */
  private keyOf(record: Row): string | null {
    const values = this.columns.map((c) => record[c]);
    return values.some((v) => v === null || v === undefined) ? null : JSON.stringify(values);
  }

  async prefetch(records: readonly Row[]): Promise<void> {
    const { tx, def, columns } = this;
    const { hooks } = tx.shape;
    const keys = [...new Set(records.map((r) => this.keyOf(r)).filter((k): k is string => k !== null && !this.probed.has(k)))];
    const intColumn = columns.map((c) => def.fields.find((f) => f.name === c)?.type === 'int');
    for (const part of chunks(keys, KEYS_PER_LOOKUP)) {
      const tuples = part.map((k) => JSON.parse(k) as (string | number)[]);
      const lists = Object.fromEntries(columns.map((_c, i) => [`u${i}`, hooks.idList([...new Set(tuples.map((t) => t[i]!))])]));
      const { rows } = await tx.run<Row>(`unique-many|${def.name}|${columns.join(',')}`, () => sql`SELECT ${sql.join(columns.map((c) => sql.ref(c)))}
        FROM ${sql.table(def.table)} WHERE ${sql.join(columns.map((c, i) =>
          (intColumn[i] ? hooks.inIds : hooks.inTexts)(sql.ref(c), new Param(`u${i}`))), sql` AND `)}`, lists);
      for (const k of part) this.probed.add(k);
      for (const r of rows) this.stored.add(JSON.stringify(columns.map((c) => r[c])));
    }
  }

  /** Refuses a value the store or an earlier record of the batch holds. */
  async check(record: Row): Promise<void> {
    const key = this.keyOf(record);
    if (key === null) return;
    const taken = this.batch.has(key) || (this.probed.has(key) ? this.stored.has(key) : await probeUnique(this.tx, this.def, this.columns, record, null));
    if (taken) throw alreadyInUse(this.def, this.columns, record);
  }

  /** The record passed: its values are the batch's now. */
  take(record: Row): void {
    const key = this.keyOf(record);
    if (key !== null) this.batch.add(key);
  }
}
