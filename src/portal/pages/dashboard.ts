// The dashboard: the four counts a quality manager starts the day with, the checks
// due in each of the coming twelve months (overdue first), and the most overdue assets.
import type { FastifyInstance } from 'fastify';
import { ask, type Asker, type EngineDeps } from '../engine.ts';
import { DUE_TEXT, dueState, type DueWindow } from '../due.ts';
import { barChart } from '../chart.ts';
import { render } from '../render.ts';
import { signedIn } from '../visit.ts';
import { countOf, homeCompany, monthAfter, monthName } from './common.ts';
import type { PageDeps } from './deps.ts';
import type { AssetRecord } from './assets.ts';

type Filters = (readonly [string, string])[];

/** Checks due per month: overdue, then this month (from today) and the eleven after it. */
async function monthlyDue(engine: EngineDeps, who: Asker, w: DueWindow) {
  const bars = [{ label: 'Overdue', value: await countOf(engine, who, 'assets', [['next_check<', w.today]]), overdue: true }];
  for (let n = 0; n < 12; n++) {
    const month = monthAfter(w.today, n);
    const filters: Filters = [['next_check~', month]];
    if (n === 0) filters.push(['next_check+', w.today]);
    bars.push({ label: monthName(month), value: await countOf(engine, who, 'assets', filters), overdue: false });
  }
  return bars;
}

export function dashboardPage(app: FastifyInstance, { engine }: PageDeps): void {
  app.get('/', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const { company, window: w } = await homeCompany(engine, who);
    const counts = [
      { label: 'Overdue', kind: 'overdue', href: '/assets?state=overdue', value: await countOf(engine, who, 'assets', [['next_check<', w.today]]) },
      { label: 'Due soon', kind: 'due', href: '/assets?state=due',
        value: await countOf(engine, who, 'assets', [['next_check+', w.today], ['next_check-', w.soon]]) },
      { label: 'Out of tolerance', kind: 'fail', href: '/assets?last_result=fail', value: await countOf(engine, who, 'assets', [['last_result=', 'fail']]) },
      { label: 'Awaiting approval', kind: 'queue', href: '/queue', value: await countOf(engine, who, 'assetqueue', [['released=', '0']]) },
    ];
    const bars = await monthlyDue(engine, who, w);
    const { response: overdue } = await ask<AssetRecord[]>(engine, who, {
      verb: 'GET', endpoint: 'assets', filters: [['next_check<', w.today]], order: 'next_check,asset_no',
    });
    const worst = overdue.slice(0, 20).map((a) => ({ ...a, state: dueState(a.next_check, w) }));
    return render(reply, req.visit, 'dashboard', 'Dashboard', 'dashboard', {
      company: company?.name ?? '', today: w.today, counts, chart: barChart(bars), bars, worst, stateText: DUE_TEXT,
    });
  });
}
