// Assets and their check dates.
import { sql } from 'kysely';
import type { Sql } from '../model/dialect.ts';
import { Param } from '../db/statements.ts';
import { dataError } from '../errors.ts';
import { addMonths, MONTHS_MAX, MONTHS_MIN } from '../model/dates.ts';
import type { Row } from '../model/types.ts';
import { managerOf } from './companies.ts';
import { ASSET_LIST } from './printed-lists.ts';
import { ADMIN_WRITES, ALL_VERBS, companyId, data, date, embed, id, modified, version, ref, required, text } from './fields.ts';
import type { Derived, Resource, WriteTx } from '../engine/types.ts';

const advances = (changes: Row) => changes.last_check !== undefined && changes.last_check !== null && changes.next_check === undefined;

/** A PUT that records a check without naming the next one sets `next_check` to `period` months later. */
function advanceNextCheck(record: Row): void {
  if (!advances(record) || typeof record.period !== 'number') return;
  const next = addMonths(String(record.last_check), record.period);
  if (next !== null) record.next_check = next;
}

/**
 * The same rule for a POST, per record in SQL: `next_check` = `last_check` plus
 * the record's (or the body's) `period` months, the day clamped to the month's
 * end; unchanged without a period or beyond the calendar (as addMonths).
 */
function deriveNextCheck(tx: WriteTx, changes: Row): Derived | null {
  if (!advances(changes)) return null;
  const { hooks } = tx.shape;
  const [year, month, day] = String(changes.last_check).split('-').map(Number) as [number, number, number];
  const period = changes.period !== undefined ? hooks.cast(new Param('d_period'), 'int') : sql.ref('t.period');
  const months = sql`(${hooks.cast(new Param('d_months'), 'int')} + ${period})`;
  const y = sql`(${months} / 12)`;
  const m = sql`(${months} % 12 + 1)`;
  const expr = sql`(CASE WHEN ${period} IS NULL OR ${months} < ${MONTHS_MIN} OR ${months} > ${MONTHS_MAX} THEN t.next_check
    ELSE ${hooks.dateText(y, m, clampedDay(y, m, hooks.cast(new Param('d_day'), 'int')))} END)`;
  return {
    field: 'next_check', key: changes.period !== undefined ? 'advance-by-body' : 'advance', expr,
    values: { d_period: changes.period ?? null, d_months: year * 12 + month - 1, d_day: day },
  };
}

/** `day`, or the last day of month `m` of year `y` when that is earlier. */
function clampedDay(y: Sql, m: Sql, day: Sql): Sql {
  const leap = sql`((${y} % 4 = 0 AND ${y} % 100 <> 0) OR ${y} % 400 = 0)`;
  const last = sql`(CASE ${m} WHEN 2 THEN (CASE WHEN ${leap} THEN 29 ELSE 28 END) WHEN 4 THEN 30 WHEN 6 THEN 30
    WHEN 9 THEN 30 WHEN 11 THEN 30 ELSE 31 END)`;
  return sql`(CASE WHEN ${day} <= ${last} THEN ${day} ELSE ${last} END)`;
}

/**
 * The approving system of each company a write's new assets go to (null: none), read
 * once per company and transaction; while it is being read, the promise of it.
 */
const managers = new WeakMap<WriteTx, Map<number, number | null | Promise<number | null>>>();

function managerIn(tx: WriteTx, companyId: number): number | null | Promise<number | null> {
  let known = managers.get(tx);
  if (!known) managers.set(tx, (known = new Map<number, number | null | Promise<number | null>>()));
  let manager = known.get(companyId);
  if (manager === undefined) known.set(companyId, (manager = readManager(tx, companyId, known)));
  return manager;
}

async function readManager(tx: WriteTx, companyId: number, known: Map<number, number | null | Promise<number | null>>): Promise<number | null> {
  const company = await tx.db.selectFrom('companies').select('data').where('id', '=', companyId).executeTakeFirst();
  const manager = managerOf(company?.data);
  known.set(companyId, manager);
  return manager;
}

/**
 * A company with an approving system takes new assets only through the queue, except
 * from that system. Without waiting once the company's is known: a PUT
 * checks a thousand new assets.
 */
function refuseUnapproved(tx: WriteTx, record: Row): Promise<void> | void {
  const manager = managerIn(tx, Number(record.company_id));
  if (manager instanceof Promise) return refuseOnceRead(tx, record, manager);
  refuseFrom(tx, record, manager);
}

async function refuseOnceRead(tx: WriteTx, record: Row, manager: Promise<number | null>): Promise<void> {
  refuseFrom(tx, record, await manager);
}

function refuseFrom(tx: WriteTx, record: Row, manager: number | null): void {
  const p = tx.ctx.principal;
  if (manager !== null && (p.session !== null || p.clientId !== manager)) {
    throw dataError(`company ${record.company_id} adds assets through assetqueue`);
  }
}

export const assets: Resource = {
  def: {
    name: 'assets', table: 'assets', verbs: ALL_VERBS, scopeColumn: 'company_id', access: ADMIN_WRITES,
    fields: [
      id, companyId, required('asset_no'), text('serial_no'), text('description'), text('status', { default: 'Active' }),
      date('next_check'), date('last_check'),
      // The result of the asset's latest check (by date, then id), kept by the checks (asset-history.ts).
      { name: 'last_result', type: 'string', nullable: true }, { name: 'period', type: 'int', nullable: true, writable: 'always' },
      ref('location_id', 'locations'), ref('department_id', 'departments'), ref('external_type_id', 'externaltypes'),
      { name: 'date_added', type: 'date', default: 'today' }, data, modified, version,
    ],
    relations: [
      embed('company', 'companies', 'company_id'),
      embed('location', 'locations', 'location_id'),
      embed('department', 'departments', 'department_id'),
      embed('externaltype', 'externaltypes', 'external_type_id', 'nulls'),
      { name: 'files', resource: 'files', back: 'asset_id', empty: 'null' },
    ],
    unique: [['company_id', 'asset_no']],
    // The reminder run's notices.
    events: { notices: ['due', 'overdue'] },
    audit: { asset: 'id' },
    tally: { table: 'asset_tallies', field: 'next_check' },
    // SQLite's only (migration 0013).
    walkIndex: { name: 'assets_id_company_id_next_check_idx', fields: ['next_check'] },
  },
  hooks: {
    beforeCreate: (_tx, record) => advanceNextCheck(record),
    beforeInsert: refuseUnapproved,
    derive: deriveNextCheck,
  },
  printed: ASSET_LIST,
};
