// The dashboard: the four counts a quality manager starts the day with, the checks
// due in each of the coming twelve months (overdue first), and the most overdue assets.
// Every asset is judged by its own company's reminder window and today, as the
// reminder run judges it: a company below the user's may keep another window or
// time zone. The counts come in two statements (engine/due-summary.ts), the list
// from the assets endpoint.
import type { FastifyInstance } from 'fastify';
import { dueCounts, type DueCounts, type ScopeCompany, scopeCompanies } from '../../engine/due-summary.ts';
import { ask, type Asker, checkAccess, type EngineDeps } from '../engine.ts';
import { DUE_TEXT, type DueWindow } from '../due.ts';
import { barChart, type Bar } from '../chart.ts';
import { render } from '../render.ts';
import { signedIn } from '../visit.ts';
import { monthAfter, monthName } from './common.ts';
import type { PageDeps } from './deps.ts';
import type { AssetRecord } from './assets.ts';

const WORST = 20;
/** Companies with overdue assets the most overdue list asks one by one, at most. */
const ASKED_APART = 8;

/** Overdue, then this month (from today) and the eleven after it; a month before the first (a company a day behind) counts in it. */
function monthlyDue(counts: DueCounts, today: string): Bar[] {
  const months = Array.from({ length: 12 }, (_, n) => monthAfter(today, n));
  const values = months.map((m) => counts.months.get(m) ?? 0);
  for (const [m, n] of counts.months) if (m < months[0]!) values[0]! += n;
  return [{ label: 'Overdue', value: counts.overdue, overdue: true }, ...months.map((m, i) => ({ label: monthName(m), value: values[i]!, overdue: false }))];
}

type Overdue = AssetRecord & { state: 'overdue' };
const overdue = (a: AssetRecord): Overdue => ({ ...a, state: 'overdue' });
const byDueThenNumber = (a: AssetRecord, b: AssetRecord) =>
  (a.next_check! < b.next_check! ? -1 : a.next_check! > b.next_check! ? 1 : a.asset_no < b.asset_no ? -1 : a.asset_no > b.asset_no ? 1 : 0);

/**
 * The most overdue assets, by next check then asset number, each overdue for its own
 * company. A few companies with overdue assets are asked one by one (each one's index
 * gives its assets in date order; the scope's together would sort every overdue asset
 * of the scope), their first pages merged. Beyond that, one list over the scope of those
 * before the latest of the companies' todays, keeping the ones overdue for their own
 * company, read on when the todays differ (time zones a day apart).
 */
async function mostOverdue(engine: EngineDeps, who: Asker, companies: readonly ScopeCompany[], overdueBy: ReadonlyMap<number, number>): Promise<Overdue[]> {
  const late = companies.filter((c) => (overdueBy.get(c.id) ?? 0) > 0);
  const list = (filters: readonly (readonly [string, string])[]) => ask<AssetRecord[]>(engine, who, { verb: 'GET', endpoint: 'assets', filters, order: 'next_check,asset_no' });
  if (late.length <= ASKED_APART) {
    const found: AssetRecord[] = [];
    for (const c of late) found.push(...(await list([['company_id=', String(c.id)], ['next_check<', c.window.today]])).response);
    return found.sort(byDueThenNumber).slice(0, WORST).map(overdue);
  }
  const windows = new Map(companies.map((c) => [c.id, c.window]));
  const todays = companies.map((c) => c.window.today).sort();
  const latest = todays[todays.length - 1]!;
  const worst: Overdue[] = [];
  for (let page = 1; worst.length < WORST; page++) {
    const { response, pagination } = await list([['next_check<', latest], ...(page > 1 ? [['page=', String(page)] as const] : [])]);
    for (const a of response) {
      const w = windows.get(Number(a.company_id));
      if (w && a.next_check !== null && a.next_check < w.today) worst.push(overdue(a));
    }
    if (todays[0] === latest || page >= (pagination?.total_pages ?? 0)) break;
  }
  return worst.slice(0, WORST);
}

const windowOf = (companies: readonly ScopeCompany[], id: number): DueWindow => {
  const found = companies.find((c) => c.id === id) ?? companies[0];
  if (!found) throw new Error(`company ${id} is not in its own scope`);
  return found.window;
};

export function dashboardPage(app: FastifyInstance, { engine }: PageDeps): void {
  app.get('/', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    checkAccess(engine, who, 'GET', 'assets');
    checkAccess(engine, who, 'GET', 'assetqueue');
    const root = who.principal.companyId;
    const companies = await scopeCompanies(engine.database, root, engine.clock.now());
    const home = companies.find((c) => c.id === root);
    const w = windowOf(companies, root);
    const c = await dueCounts(engine.database, root, companies);
    const counts = [
      { label: 'Overdue', kind: 'overdue', href: '/assets?state=overdue', value: c.overdue },
      { label: 'Due soon', kind: 'due', href: '/assets?state=due', value: c.due },
      { label: 'Out of tolerance', kind: 'fail', href: '/assets?last_result=fail', value: c.failed },
      { label: 'Awaiting approval', kind: 'queue', href: '/queue', value: c.queued },
    ];
    const bars = monthlyDue(c, w.today);
    const worst = await mostOverdue(engine, who, companies, c.overdueBy);
    return render(reply, req.visit, 'dashboard', 'Dashboard', 'dashboard', {
      company: home?.name ?? '', today: w.today, counts, chart: barChart(bars), bars, worst, stateText: DUE_TEXT,
    });
  });
}
