// The benchmark data set, written straight into the tables in chunks (see
// seed-insert.ts) — the API would take minutes for 100k assets.
// Deterministic: the same seed gives the same rows, dates relative to `today`.
import { sql } from 'kysely';
import { addClient, addCompany, addUser } from '../src/admin/accounts.ts';
import type { Database } from '../src/db/database.ts';
import { runReminders } from '../src/jobs/reminders.ts';
import { addDays, addMonths, formatDatetime, systemClock } from '../src/model/dates.ts';
import type { Engine } from './config.ts';
import { MAKERS, PERIODS, random, TYPES } from './new-assets.ts';
import { type ChecksSeed, seedChecks } from './seed-checks.ts';
import { type AssetRow, type BenchTables, insertAssets, insertReminders } from './seed-insert.ts';

export interface SeedOptions {
  readonly engine: Engine; readonly certPem: string; readonly today: string; readonly assets?: number;
  /** Only the first n companies of the tree (the CSV export seeds one); default all 10. */
  readonly companies?: number;
  /**
   * The stall workload's store for the first reminder run: next_check within the
   * reminder window or overdue (most assets due), no reminders made, and a user
   * taking reminders in each company. Otherwise next_check is spread over ±2 years
   * and the reminders a live service would long have made are written.
   */
  readonly due?: boolean;
  /** Also the checks of W8 and W9 (seed-checks.ts). */
  readonly checks?: boolean;
}

export interface SeedSummary {
  readonly companies: readonly { id: number; name: string; parentId: number | null; inScope: boolean }[];
  readonly clientId: number;
  readonly assetsTotal: number;
  readonly assetsInScope: number;
  /** The first and last asset id of the scope: the scope's assets have contiguous ids. */
  readonly scopeIds: { readonly first: number; readonly last: number };
  /** Assets in the client's scope with next_check < today: what `next_check<today` must count. */
  readonly overdueInScope: number;
  /** Reminders written by the seed, and what the real reminder job still did after it (should be ~0; none of it for a `due` store). */
  readonly reminders: { readonly seeded: number; readonly jobCreated: number; readonly jobDelivered: number };
  /** Assets a reminder run must remind (next_check within 30 days or past, not Retired), over all companies. */
  readonly dueTotal: number;
  /** Users taking reminders, per company. */
  readonly usersPerCompany: number;
  /** The locations and departments of the certificate's company (new assets point at them). */
  readonly places: { readonly locations: readonly number[]; readonly departments: readonly number[] };
  /** The assets of W8 and W9 and their standards, when the checks were seeded. */
  readonly checks: ChecksSeed | null;
}

// 10 companies: the benchmarked certificate belongs to Bench Holdings, whose scope is
// itself, two children and a grandchild (4 of 10); the other six are unrelated tenants.
const TREE: readonly [name: string, parent: number | null][] = [
  ['Bench Holdings', null], ['Bench Labs', 0], ['Bench Field Service', 0], ['Bench Labs North', 1],
  ['Tenant E', null], ['Tenant F', null], ['Tenant G', null], ['Tenant H', 6], ['Tenant I', null], ['Tenant J', null],
];
const IN_SCOPE = 4;
const CHUNK = 10_000;
/** The reminder window of a company without `data.reminder_days` (src/jobs/reminders.ts). */
const WINDOW_DAYS = 30;

const LOCATIONS = ['Calibration lab', 'Workshop', 'Warehouse', 'Service van 1', 'Service van 2'];
const DEPARTMENTS = ['Quality', 'Production', 'Maintenance'];
const STATUSES = ['Active', 'Active', 'Active', 'Active', 'Active', 'Active', 'Active', 'Active', 'Active', 'Out for repair', 'Retired'];

export async function seedBench(database: Database, o: SeedOptions): Promise<SeedSummary> {
  const rnd = random(20171009);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const now = formatDatetime(new Date());
  const db = database.db.withTables<BenchTables>();

  const tree = TREE.slice(0, o.companies ?? TREE.length);
  const ids: number[] = [];
  for (const [name, parent] of tree) ids.push(await addCompany(database, name, parent === null ? null : ids[parent]!));
  const client = await addClient(database, { companyId: ids[0]!, certPem: o.certPem, name: 'bench client' });

  const described = (list: readonly string[], companyId: number) =>
    list.map((description) => ({ company_id: companyId, description, data: null, modified: now }));
  const refs = new Map<number, { loc: number[]; dep: number[]; ext: number[] }>();
  for (const companyId of ids) {
    const loc = await db.insertInto('locations').values(described(LOCATIONS, companyId).map((r) => ({ ...r, creationdate: now }))).returning('id').execute();
    const dep = await db.insertInto('departments').values(described(DEPARTMENTS, companyId).map((r) => ({ ...r, creationdate: now }))).returning('id').execute();
    const ext = await db.insertInto('externaltypes').values(described(TYPES, companyId).map((r, i) => ({ ...r, external_itemtype_id: 100 + i }))).returning('id').execute();
    refs.set(companyId, { loc: loc.map((r) => Number(r.id)), dep: dep.map((r) => Number(r.id)), ext: ext.map((r) => Number(r.id)) });
  }

  const total = o.assets ?? 100_000;
  const perCompany = Math.ceil(total / ids.length);
  const dueBy = addDays(o.today, WINDOW_DAYS);
  let overdueInScope = 0;
  let dueTotal = 0;
  for (let start = 0; start < total; start += CHUNK) {
    const rows: AssetRow[] = [];
    for (let n = start; n < Math.min(start + CHUNK, total); n++) {
      const c = Math.floor(n / perCompany);
      const companyId = ids[c]!;
      const r = refs.get(companyId)!;
      const period = pick(PERIODS);
      // next_check spread over ±2 years around today (a due store: up to 2 years overdue, or within the window); 4% never scheduled.
      const nextCheck = rnd() < 0.04 ? null : addDays(o.today, Math.floor(rnd() * (o.due ? 731 + WINDOW_DAYS : 1461)) - 730);
      if (c < IN_SCOPE && nextCheck !== null && nextCheck < o.today) overdueInScope++;
      const [maker, model] = pick(MAKERS);
      rows.push({
        company_id: companyId, asset_no: `A${c + 1}-${String(n).padStart(6, '0')}`, serial_no: `SN-${Math.floor(rnd() * 1e8)}`,
        description: `${pick(TYPES)} ${model}`, status: pick(STATUSES), next_check: nextCheck,
        last_check: nextCheck === null ? null : addMonths(nextCheck, -period), period,
        location_id: pick(r.loc), department_id: rnd() < 0.1 ? null : pick(r.dep), external_type_id: rnd() < 0.3 ? null : pick(r.ext),
        date_added: addDays(o.today, -Math.floor(rnd() * 3650)),
        data: rnd() < 0.1 ? null : JSON.stringify({ costcode: `P-${10 + Math.floor(rnd() * 40)}`, manufacturer: maker, model, room: `B${1 + Math.floor(rnd() * 4)}-${100 + Math.floor(rnd() * 60)}` }),
        modified: now,
      });
      const row = rows[rows.length - 1]!;
      if (row.next_check !== null && row.next_check <= dueBy && row.status !== 'Retired') dueTotal++;
    }
    await insertAssets(database, o.engine, rows);
  }

  let reminders = { seeded: 0, jobCreated: 0, jobDelivered: 0 };
  if (o.due) {
    for (const [i, companyId] of ids.entries()) await addUser(database, { companyId, username: `bench.user${i + 1}`, email: `user${i + 1}@bench.test` });
  } else {
    const seeded = await insertReminders(database, o.engine, o.today);
    const run = await runReminders(database, systemClock);
    reminders = { seeded, jobCreated: run.created, jobDelivered: run.delivered };
  }
  const assetsInScope = Math.min(total, perCompany * IN_SCOPE);
  const checks = o.checks ? await seedChecks(database, ids.slice(0, IN_SCOPE), o.today, now) : null;
  const root = refs.get(ids[0]!)!;
  return {
    reminders, dueTotal, checks, usersPerCompany: o.due ? 1 : 0, places: { locations: root.loc, departments: root.dep },
    companies: tree.map(([name, parent], i) => ({ id: ids[i]!, name, parentId: parent === null ? null : ids[parent]!, inScope: i < IN_SCOPE })),
    clientId: client.id, assetsTotal: total, assetsInScope, overdueInScope,
    scopeIds: await scopeIds(database, ids.slice(0, IN_SCOPE), assetsInScope),
  };
}

async function scopeIds(database: Database, scope: readonly number[], expected: number): Promise<{ first: number; last: number }> {
  if (expected === 0) return { first: 0, last: -1 };
  const { rows } = await sql<{ first: number; last: number; n: number }>`SELECT MIN(id) AS first, MAX(id) AS last, COUNT(*) AS n
    FROM assets WHERE company_id IN (${sql.join(scope)})`.execute(database.db);
  const first = Number(rows[0]?.first);
  const last = Number(rows[0]?.last);
  if (Number(rows[0]?.n) !== expected || last - first + 1 !== expected) throw new Error(`the scope's ${expected} assets do not have contiguous ids`);
  return { first, last };
}
