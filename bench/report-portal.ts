// The portal workloads' report (portal.ts): per database the dashboard and the asset
// list beside the API requests that read the same data, their p50 and p99 (each
// request timed from sending to its answer's last byte, one at a time on an idle
// keep-alive connection), and the dashboard's ratio beside its target.
import { say, TARGETS } from './config.ts';
import type { PortalRun } from './portal.ts';
import { ms, printColumns, printRatios, type Ratio } from './report-format.ts';
import type { Series } from './result.ts';
import { engineLabel } from './setup.ts';

const NONE: Series = { n: 0, p50: NaN, p90: NaN, p99: NaN, max: NaN };

export function printPortal(runs: readonly PortalRun[]): void {
  if (runs.length === 0) return;
  const cells: string[][] = [];
  const ratios: Ratio[] = [];
  for (const run of runs) {
    const s = run.row.load.series ?? {};
    const get = (k: string) => s[k] ?? NONE;
    const db = engineLabel(run.engine);
    const line = (name: string, x: Series) => [`${db}: ${name}`, ms(x.p50), ms(x.p99), ms(x.max), String(x.n)];
    cells.push(
      line('dashboard GET /', get('dashboard')),
      line(`the same counts and list from the API (${run.apiRequests} requests, summed)`, get('dashboardApi')),
      line('asset list GET /assets?due_before=today', get('list')),
      line('GET /3.0/assets/next_check<today, order asset_no', get('listApi')),
    );
    ratios.push(
      { name: `${db}: dashboard ÷ its API requests, p50`, value: get('dashboard').p50 / get('dashboardApi').p50, compare: '≤', target: TARGETS.dashboardVsApi },
      { name: `${db}: dashboard ÷ its API requests, p99`, value: get('dashboard').p99 / get('dashboardApi').p99, compare: '≤', target: null },
      { name: `${db}: asset list ÷ its API page, p50`, value: get('list').p50 / get('listApi').p50, compare: '≤', target: null },
      { name: `${db}: asset list ÷ its API page, p99`, value: get('list').p99 / get('listApi').p99, compare: '≤', target: null },
    );
  }
  printColumns(`Portal (${runs[0]!.assets} assets in the scope, a company and its child with another window and time zone; ms per page, one request at a time):`,
    ['workload', 'p50', 'p99', 'max', 'rounds'], cells);
  printRatios(ratios);
  say(`  server CPU ${runs.map((r) => `${engineLabel(r.engine)} ${r.row.serverCpuPercent.toFixed(0)}%, other ${r.row.otherCpuPercent.toFixed(0)}%`).join('; ')}`);
}
