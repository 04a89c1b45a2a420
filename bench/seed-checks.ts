// The checks W8 and W9 need, written straight into the workloads' store after its
// assets (no asset is added: the store keeps its BENCH_ROWS). Six assets of the
// certificate's scope are picked from its end — Active, next check beyond the reminder
// window (so neither W2's count, its pages nor a reminder run sees them), last check
// not after today — and given:
//   four standards: a passed check each, dated their last check, with 20 points and
//     their own next check: in calibration today;
//   W9's asset: a history of HISTORY_CHECKS passed checks, a fortnight apart up to its
//     last check, each with 20 points, 2 of the standards and a certificate file of
//     its own;
//   W8's asset: no check yet (W8 records its checks).
// The standards and W9's asset then show `last_result` pass, as their latest check says.
import type { Generated } from 'kysely';
import type { Database } from '../src/db/database.ts';
import { addDays, addMonths } from '../src/model/dates.ts';
import { STANDARDS_PER_CHECK, storedPoints } from './check-bodies.ts';

export const HISTORY_CHECKS = 100;
const STANDARDS = 4;
const DAYS_APART = 14;
/** Beyond the reminder window of a company without `data.reminder_days` (src/jobs/reminders.ts). */
const WINDOW_DAYS = 30;

export interface ChecksSeed {
  /** W9's asset and how many checks it has. */
  readonly historyAsset: number;
  readonly historyChecks: number;
  /** W8's asset. */
  readonly checkedAsset: number;
  /** Assets in calibration today, each with a check of its own. */
  readonly standards: readonly number[];
}

type CheckRow = {
  company_id: number; asset_id: number; check_type: string; check_date: string; performed_by: string; certificate_no: string;
  result: string; points: string; standard_ids: string; file_id: number | null; next_check: string | null; data: string | null;
  created: string; modified: string;
};
type FileRow = {
  token: string; filedate: string; description: string; filename: string; asset_id: number; company_id: number; data: string;
  mimetype: string; size: number; modified: string;
};
type CheckTables = {
  assetchecks: { id: Generated<number> } & CheckRow;
  files: { id: Generated<number> } & FileRow;
  assetcheck_standards: { check_id: number; position: number; asset_id: number };
  assets: { id: number; company_id: number; status: string; next_check: string | null; last_check: string | null; period: number | null; last_result: string | null };
};

export async function seedChecks(database: Database, scope: readonly number[], today: string, now: string): Promise<ChecksSeed> {
  const db = database.db.withTables<CheckTables>();
  const picked = await db.selectFrom('assets').select(['id', 'company_id', 'next_check', 'last_check', 'period'])
    .where('company_id', 'in', [...scope]).where('status', '=', 'Active').where('next_check', '>', addDays(today, WINDOW_DAYS))
    .where('last_check', '<=', today).where('period', 'is not', null)
    .orderBy('id', 'desc').limit(STANDARDS + 2).execute();
  if (picked.length < STANDARDS + 2) throw new Error(`the scope has ${picked.length} assets fit for the checks' workloads, not ${STANDARDS + 2}`);
  const [history, checked, ...standards] = picked.map((a) => ({ ...a, id: Number(a.id), company_id: Number(a.company_id), period: Number(a.period) }));
  const { json: points, result } = storedPoints();
  const check = (a: { id: number; company_id: number }, day: string, next: string | null, used: readonly number[], fileId: number | null, n: number): CheckRow => ({
    company_id: a.company_id, asset_id: a.id, check_type: 'calibration', check_date: day, performed_by: 'Bench Lab', certificate_no: `C-${a.id}-${n}`,
    result, points, standard_ids: JSON.stringify(used), file_id: fileId, next_check: next, data: null, created: now, modified: now,
  });

  await database.transaction(async (trx) => {
    const t = trx.withTables<CheckTables>();
    await t.insertInto('assetchecks').values(standards.map((s) => check(s, s.last_check!, s.next_check, [], null, 0))).execute();
    // Oldest first: ids ascend with the dates, as checks recorded one by one would.
    const days = Array.from({ length: HISTORY_CHECKS }, (_, i) => addDays(history!.last_check!, -DAYS_APART * (HISTORY_CHECKS - 1 - i)));
    const files = await t.insertInto('files').values(days.map((day, i): FileRow => ({
      token: `bench-certificate-${history!.id}-${i}`, filedate: day, description: `Calibration certificate ${i + 1}`, filename: `certificate-${i + 1}.pdf`,
      asset_id: history!.id, company_id: history!.company_id, data: '{}', mimetype: 'application/pdf', size: 48_000 + i, modified: now,
    }))).returning('id').execute();
    const usedBy = (i: number) => [standards[i % STANDARDS]!.id, standards[(i + 1) % STANDARDS]!.id].slice(0, STANDARDS_PER_CHECK);
    const ids = await t.insertInto('assetchecks').values(days.map((day, i) => check(history!, day,
      i === HISTORY_CHECKS - 1 ? history!.next_check : addMonths(day, history!.period), usedBy(i), Number(files[i]!.id), i + 1))).returning('id').execute();
    await t.insertInto('assetcheck_standards').values(ids.flatMap((r, i) => usedBy(i).map((asset_id, position) => ({ check_id: Number(r.id), position, asset_id }))))
      .execute();
    await t.updateTable('assets').set({ last_result: result }).where('id', 'in', [history!.id, ...standards.map((s) => s.id)]).execute();
  });
  return { historyAsset: history!.id, historyChecks: HISTORY_CHECKS, checkedAsset: checked!.id, standards: standards.map((s) => s.id) };
}
