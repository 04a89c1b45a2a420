// PUT: new records, and the rows of a CSV import. Every record
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
import type { FieldDef, FieldType, ResourceDef, Row, SqlValue } from '../model/types.ts';
import { auditSelect, storedFields } from './audit.ts';
import { objectText } from './record-json.ts';
import { alreadyInUse, probeUnique, readBody, referenceHolds } from './checks.ts';
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
  private readonly fields: CreateFields;
  /** `pacer`: a long write (a CSV import) gives the event loop turns as it builds its rows. */
  constructor(private readonly tx: WriteTx, private readonly res: Resource, private readonly pacer: Pacer | null = null) {
    this.found = new FoundRecords(tx);
    this.unique = (res.def.unique ?? []).map((columns) => new UniqueValues(tx, res.def, columns));
    this.fields = createFields(res.def);
  }

  /**
   * Checks records in their order, after reading at once what their checks will ask
   * the store (the records their references name, the unique values they would
   * take; only a cache: a value a hook sets later is looked up when its check
   * comes). Returns those that passed, filled in, for `insert`.
   */
  async check(items: readonly Row[], on: CheckEvents = {}): Promise<Row[]> {
    const { tx, fields } = this;
    const records = items.map((values) => withDefaults(tx, fields, values));
    for (const f of fields.references) {
      const ids = records.map((r) => r[f.name]).filter((v): v is number => typeof v === 'number');
      await this.found.prefetch(tx.ctx.catalog.lookup(f.references!.resource), ids);
    }
    for (const u of this.unique) await u.prefetch(records);
    const passed: Row[] = [];
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      on.checking?.(i);
      if (this.pacer?.due()) await nextTurn();
      try {
        const pending = this.checkOne(items[i]!, record);
        if (pending) await pending;
        passed.push(record);
      } catch (error) {
        if (!on.refused) throw error;
        on.refused(i, error);
      }
    }
    return passed;
  }

  /**
   * One record's checks, in this order: the place the body names, the hook that
   * fills the record in, its required fields, every reference, its unique values,
   * the hook that may refuse it (throws the first refusal); once it passes, its
   * unique values are the write's. They run without a turn of the event loop for as
   * long as what they ask the store was read before (prefetch), and return a promise
   * from the first step that waits for a look-up or an asynchronous hook on: a
   * thousand records' awaits cost more than their checks. (What waits is in a
   * function of its own: a closure in the loop would make its variables a context
   * object per step, waiting or not.)
   */
  private checkOne(values: Row, record: Row, from = 0): Promise<void> | undefined {
    for (let step = from; step < CHECK_STEPS; step++) {
      const pending = this.checkStep(step, values, record);
      if (pending) return this.checkAfter(pending, values, record, step + 1);
    }
    return undefined;
  }

  private async checkAfter(pending: Promise<void>, values: Row, record: Row, step: number): Promise<void> {
    await pending;
    await this.checkOne(values, record, step);
  }

  private checkStep(step: number, values: Row, record: Row): Promise<void> | void {
    const { tx, res: { hooks }, fields } = this;
    switch (step) {
      case 0: return this.references(record, fields.placing, values);
      case 1: return hooks?.beforeCreate?.(tx, record);
      case 2:
        for (const f of fields.required) if (record[f.name] === undefined || record[f.name] === null) throw invalidValue(f.name);
        return;
      case 3: return this.references(record, fields.references, null);
      case 4: return this.uniqueChecks(record);
      case 5: return hooks?.beforeInsert?.(tx, record);
      default: for (const u of this.unique) u.take(record);
    }
  }

  /**
   * Every record `record` refers to through `fields` (with `given`, only those the
   * body named), checked in their order as checkReferences does; those the batch
   * read before, at once.
   */
  private references(record: Row, fields: readonly FieldDef[], given: Row | null, from = 0): Promise<void> | undefined {
    const { tx, res: { def }, found } = this;
    for (let i = from; i < fields.length; i++) {
      const f = fields[i]!;
      const value = record[f.name];
      if (value === null || value === undefined || (given && given[f.name] === undefined)) continue;
      const target = tx.ctx.catalog.lookup(f.references!.resource);
      const known = found.known(target, Number(value));
      if (known === undefined) return this.referenceAfter(record, fields, given, i);
      referenceHolds(def, record, f, target, known);
    }
    return undefined;
  }

  /** The references from the `i`th of `fields` on, once the record it names is read. */
  private async referenceAfter(record: Row, fields: readonly FieldDef[], given: Row | null, i: number): Promise<void> {
    const f = fields[i]!;
    const target = this.tx.ctx.catalog.lookup(f.references!.resource);
    referenceHolds(this.res.def, record, f, target, await this.found.find(target, Number(record[f.name])));
    await this.references(record, fields, given, i + 1);
  }

  private uniqueChecks(record: Row, from = 0): Promise<void> | undefined {
    for (let i = from; i < this.unique.length; i++) {
      const pending = this.unique[i]!.check(record);
      if (pending) return this.uniqueAfter(pending, record, i + 1);
    }
    return undefined;
  }

  private async uniqueAfter(pending: Promise<void>, record: Row, from: number): Promise<void> {
    await pending;
    await this.uniqueChecks(record, from);
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

/** The steps of NewRecords.checkStep. */
const CHECK_STEPS = 7;

/** Consecutive records with the same columns, at most ROWS_PER_STATEMENT to a statement. */
function* sameColumns(records: readonly Row[]): Generator<Row[]> {
  let run: Row[] = [];
  let columns: string[] = [];
  for (const r of records) {
    const these = Object.keys(r);
    if (run.length > 0 && (run.length === ROWS_PER_STATEMENT || !sameList(these, columns))) { yield run; run = []; }
    columns = these;
    run.push(r);
  }
  if (run.length > 0) yield run;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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

/** The fields of a definition that its new records' checks go through, in the definition's order. */
interface CreateFields {
  readonly def: ResourceDef;
  /** Set on every new record (`modified`) or when the body leaves them out. */
  readonly filled: readonly FieldDef[];
  readonly required: readonly FieldDef[];
  readonly references: readonly FieldDef[];
  /** The references that place a record (placing): checked first, when the body names them. */
  readonly placing: readonly FieldDef[];
}

const createFieldsOf = new WeakMap<ResourceDef, CreateFields>();

function createFields(def: ResourceDef): CreateFields {
  let fields = createFieldsOf.get(def);
  if (!fields) {
    fields = {
      def, filled: def.fields.filter((f) => f.touch || f.default !== undefined), required: def.fields.filter((f) => f.required),
      references: def.fields.filter((f) => f.references), placing: def.fields.filter((f) => f.references?.rule === 'in-scope'),
    };
    createFieldsOf.set(def, fields);
  }
  return fields;
}

/**
 * The record of a body's values, its defaults filled in. A copy by Object.assign:
 * properties added to a spread copy gave every record a hidden class of its own
 * (some 2 KB each, and slow property access in every check after).
 */
function withDefaults(tx: WriteTx, { def, filled }: CreateFields, values: Row): Row {
  const record: Row = Object.assign({}, values);
  for (const f of filled) {
    if (f.touch) record[f.name] = tx.now;
    else if (record[f.name] === undefined) record[f.name] = f.default === 'now' ? tx.now : f.default === 'today' ? tx.today : f.default as SqlValue;
  }
  if (def.scopeColumn !== 'id' && record[def.scopeColumn] === undefined) record[def.scopeColumn] = tx.ctx.principal.companyId;
  return record;
}

type Found = Row | null | Promise<Row | null>;

/**
 * tx.find, answered for one batch from look-ups of many ids at once (many new
 * records name the same few); `known` tells what is already read without waiting.
 */
class FoundRecords {
  /** By resource name and id: the record (null: none the caller may see), or its look-up under way. */
  private readonly seen = new Map<string, Map<number, Found>>();
  constructor(private readonly tx: WriteTx) {}

  private of(def: ResourceDef): Map<number, Found> {
    let ids = this.seen.get(def.name);
    if (!ids) this.seen.set(def.name, (ids = new Map<number, Found>()));
    return ids;
  }

  readonly find: Find = async (def, id) => {
    const ids = this.of(def);
    const found = ids.get(id);
    if (found !== undefined) return found;
    const lookup = this.tx.find(def, id);
    ids.set(id, lookup);
    const row = await lookup;
    ids.set(id, row);
    return row;
  };

  /** The record of `def` with this id as read before (null: none), or undefined while it is not (yet) read. */
  known(def: ResourceDef, id: number): Row | null | undefined {
    const found = this.seen.get(def.name)?.get(id);
    return found instanceof Promise ? undefined : found;
  }

  async prefetch(def: ResourceDef, ids: readonly number[]): Promise<void> {
    const { tx } = this;
    const seen = this.of(def);
    const wanted = [...new Set(ids)].filter((id) => !seen.has(id));
    for (const part of chunks(wanted, KEYS_PER_LOOKUP)) {
      const { rows } = await tx.run<Row>(`find-many|${def.name}`, () => sql`SELECT t.* FROM ${sql.table(def.table)} AS t
        WHERE ${tx.shape.hooks.inIds(sql.ref('t.id'), IDS)} AND ${visible(tx.shape, def, 't', 'probe')}`, { ids: tx.shape.hooks.idList(part) });
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      for (const id of part) seen.set(id, byId.get(id) ?? null);
    }
  }
}

/** One unique constraint over a batch: the values taken in the store (read for the batch at once) and by the batch's records. */
class UniqueValues {
  private readonly probed = new Set<string>();
  private readonly stored = new Set<string>();
  private readonly batch = new Set<string>();
  constructor(private readonly tx: WriteTx, private readonly def: ResourceDef, private readonly columns: readonly string[]) {}

  /** The values of a key being made (one array for all keys: a key is its JSON text). */
  private readonly values: unknown[] = [];

  /** The record's values as one key, or null when one is missing (no constraint then). */
  private keyOf(record: Row): string | null {
    const { columns, values } = this;
    for (let i = 0; i < columns.length; i++) {
      const v = record[columns[i]!];
      if (v === null || v === undefined) return null;
      values[i] = v;
    }
    return JSON.stringify(values);
  }

  async prefetch(records: readonly Row[]): Promise<void> {
    const { tx, def, columns } = this;
    const { hooks } = tx.shape;
    // The values of each key not looked up before, by key, in the records' order.
    const wanted = new Map<string, (string | number)[]>();
    for (const r of records) {
      const k = this.keyOf(r);
      if (k !== null && !this.probed.has(k) && !wanted.has(k)) wanted.set(k, columns.map((c) => r[c]!));
    }
    const intColumn = columns.map((c) => def.fields.find((f) => f.name === c)?.type === 'int');
    for (const entries of chunks([...wanted], KEYS_PER_LOOKUP)) {
      const part = entries.map(([k]) => k);
      const lists = Object.fromEntries(columns.map((_c, i) => [`u${i}`, hooks.idList([...new Set(entries.map(([, t]) => t[i]!))])]));
      const { rows } = await tx.run<Row>(`unique-many|${def.name}|${columns.join(',')}`, () => sql`SELECT ${sql.join(columns.map((c) => sql.ref(c)))}
        FROM ${sql.table(def.table)} WHERE ${sql.join(columns.map((c, i) =>
          (intColumn[i] ? hooks.inIds : hooks.inTexts)(sql.ref(c), new Param(`u${i}`))), sql` AND `)}`, lists);
      for (const k of part) this.probed.add(k);
      for (const r of rows) this.stored.add(JSON.stringify(columns.map((c) => r[c])));
    }
  }

  /** Refuses a value the store or an earlier record of the batch holds (once the store is asked, when it was not before). */
  check(record: Row): Promise<void> | undefined {
    const key = this.keyOf(record);
    if (key === null) return undefined;
    if (!this.batch.has(key) && !this.probed.has(key)) return this.probe(record);
    if (this.batch.has(key) || this.stored.has(key)) throw alreadyInUse(this.def, this.columns, record);
    return undefined;
  }

  private async probe(record: Row): Promise<void> {
    if (await probeUnique(this.tx, this.def, this.columns, record, null)) throw alreadyInUse(this.def, this.columns, record);
  }

  /** The record passed: its values are the batch's now. */
  take(record: Row): void {
    const key = this.keyOf(record);
    if (key !== null) this.batch.add(key);
  }
}
