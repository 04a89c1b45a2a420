// The benchmark data set, written straight into the tables (multi-row INSERTs,
// one transaction per batch) — the API would take minutes for 100k assets.
// Deterministic: the same seed gives the same rows, dates relative to `today`.
import type { Generated } from 'kysely';
import { addClient, addCompany } from '../src/admin.ts';
import type { Database } from '../src/db/database.ts';
import { runReminders } from '../src/jobs/reminders.ts';
import { addDays, addMonths, formatDatetime, systemClock } from '../src/model/dates.ts';

type Described = { id: Generated<number>; company_id: number; description: string; data: string | null; modified: string };
// Type aliases, not interfaces: withTables<T> needs an index-signature-compatible type.
type BenchTables = {
  assetreminders: {
    id: Generated<number>; company_id: number; asset_id: number; user_id: number | null; due_date: string; remind_date: string;
    message: string; sent: number; acknowledged: number; data: string | null;
  };
  locations: Described & { creationdate: string };
  departments: Described & { creationdate: string };
  externaltypes: Described & { external_itemtype_id: number };
  assets: {
    id: Generated<number>; company_id: number; asset_no: string; serial_no: string; description: string; status: string;
    next_check: string | null; last_check: string | null; period: number | null; location_id: number | null;
    department_id: number | null; external_type_id: number | null; date_added: string; data: string | null; modified: string;
  };
};

export interface SeedOptions { readonly certPem: string; readonly today: string; readonly assets?: number }

export interface SeedSummary {
  readonly companies: readonly { id: number; name: string; parentId: number | null; inScope: boolean }[];
  readonly clientId: number;
  readonly assetsTotal: number;
  readonly assetsInScope: number;
  /** Assets in the client's scope with next_check < today: what `next_check<today` must count. */
  readonly overdueInScope: number;
  /** Reminders written by the seed, and what the real reminder job still did after it (should be ~0). */
  readonly reminders: { readonly seeded: number; readonly jobCreated: number; readonly jobDelivered: number };
}

// 10 companies: the benchmarked certificate belongs to Bench Holdings, whose scope is
// itself, two children and a grandchild (4 of 10); the other six are unrelated tenants.
const TREE: readonly [name: string, parent: number | null][] = [
  ['Bench Holdings', null], ['Bench Labs', 0], ['Bench Field Service', 0], ['Bench Labs North', 1],
  ['Tenant E', null], ['Tenant F', null], ['Tenant G', null], ['Tenant H', 6], ['Tenant I', null], ['Tenant J', null],
];
const IN_SCOPE = 4;
const BATCH = 1000;

const LOCATIONS = ['Calibration lab', 'Workshop', 'Warehouse', 'Service van 1', 'Service van 2'];
const DEPARTMENTS = ['Quality', 'Production', 'Maintenance'];
const TYPES = ['Torque wrench', 'Multimeter', 'Pressure gauge', 'Scale'];
const MAKERS = [['Norbar', 'TTi 100'], ['Fluke', '87V'], ['WIKA', 'CPG1500'], ['Mettler Toledo', 'ICS425'], ['Keysight', 'U1282A']];
const STATUSES = ['Active', 'Active', 'Active', 'Active', 'Active', 'Active', 'Active', 'Active', 'Active', 'Out for repair', 'Retired'];
const PERIODS = [6, 12, 12, 12, 24, 36];

/** mulberry32: small, fast, deterministic. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function seedBench(database: Database, o: SeedOptions): Promise<SeedSummary> {
  const rnd = random(20171009);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const now = formatDatetime(new Date());
  const db = database.db.withTables<BenchTables>();

  const ids: number[] = [];
  for (const [name, parent] of TREE) ids.push(await addCompany(database, name, parent === null ? null : ids[parent]!));
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
  let overdueInScope = 0;
  for (let start = 0; start < total; start += BATCH) {
    const rows: Omit<BenchTables['assets'], 'id'>[] = [];
    for (let n = start; n < Math.min(start + BATCH, total); n++) {
      const c = Math.floor(n / perCompany);
      const companyId = ids[c]!;
      const r = refs.get(companyId)!;
      const period = pick(PERIODS);
      // next_check spread over ±2 years around today; 4% never scheduled.
      const nextCheck = rnd() < 0.04 ? null : addDays(o.today, Math.floor(rnd() * 1461) - 730);
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
    }
    await database.transaction((trx) => trx.withTables<BenchTables>().insertInto('assets').values(rows).execute());
  }

  const seeded = await seedReminders(database, o.today);
  const run = await runReminders(database, systemClock);
  return {
    reminders: { seeded, jobCreated: run.created, jobDelivered: run.delivered },
    companies: TREE.map(([name, parent], i) => ({ id: ids[i]!, name, parentId: parent === null ? null : ids[parent]!, inScope: i < IN_SCOPE })),
    clientId: client.id, assetsTotal: total, assetsInScope: Math.min(total, perCompany * IN_SCOPE), overdueInScope,
  };
}

/**
 * What the reminder job (src/jobs/reminders.ts: 30-day window, retired assets
 * excluded) would long have left on a live service: one reminder per due asset,
 * delivered once its remind date passed. Written in bulk because the job's own
 * first run over 100k assets takes tens of seconds (and on SQLite holds the one
 * connection meanwhile); the real job then runs once to top up any difference.
 */
async function seedReminders(database: Database, today: string): Promise<number> {
  const db = database.db.withTables<BenchTables>();
  const due = await db.selectFrom('assets').select(['id', 'company_id', 'asset_no', 'description', 'next_check'])
    .where('next_check', 'is not', null).where('next_check', '<=', addDays(today, 30)).where('status', '<>', 'Retired').orderBy('id').execute();
  for (let start = 0; start < due.length; start += BATCH) {
    const rows = due.slice(start, start + BATCH).map((a) => {
      const nextCheck = a.next_check!;
      const remind = addDays(nextCheck, -30);
      return {
        company_id: a.company_id, asset_id: Number(a.id), user_id: null, due_date: nextCheck, remind_date: remind,
        message: `${nextCheck < today ? 'Overdue' : 'Due'}: check of asset ${a.asset_no} (${a.description}) on ${nextCheck}`,
        sent: remind <= today ? 1 : 0, acknowledged: 0, data: null,
      };
    });
    await database.transaction((trx) => trx.withTables<BenchTables>().insertInto('assetreminders').values(rows).execute());
  }
  return due.length;
}
