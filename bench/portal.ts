// The portal workloads on one database: a store of their own, BENCH_ROWS assets in
// the benchmark certificate's company and its child (half each; every 50th asset
// failed its last check), the child keeping another reminder window and time zone
// (60 days, Pacific/Kiritimati: a day ahead of UTC from 10:00 UTC), and a portal user
// of the parent company. The service runs with its portal; portal-client.ts asks, one
// request at a time, the dashboard beside the API requests that give the same counts
// and most overdue list (company by company where the windows differ), and the asset
// list due before today beside `GET /3.0/assets/next_check<today` in asset number
// order, page 1. The certificate and the user share one scope.
import { rmSync } from 'node:fs';
import { sql } from 'kysely';
import { addUser, setPassword } from '../src/admin/accounts.ts';
import { openDatabase } from '../src/db/database.ts';
import { addDays } from '../src/model/dates.ts';
import { type DueWindow, settingsOf, windowAt } from '../src/model/reminder-window.ts';
import { monthAfter } from '../src/portal/pages/common.ts';
import { type Engine, PORTAL_DIR, PORTAL_ITERATIONS, PORTAL_WARMUPS, ROWS, TLS_FILES } from './config.ts';
import { measureServer, type Row } from './measure.ts';
import type { ApiAsk, PortalJob } from './portal-client.ts';
import { freePort } from './processes.ts';
import { createPgDatabase, dropPgDatabase, engineLabel, seed } from './setup.ts';
import { announce, service } from './workloads.ts';

const CHILD_DATA = JSON.stringify({ reminder_days: 60, timezone: 'Pacific/Kiritimati' });
const USER = { username: 'bench.portal', password: 'bench portal password' };

export interface PortalRun {
  readonly engine: Engine;
  readonly row: Row;
  readonly assets: number;
  /** Requests the API needs for the dashboard's figures. */
  readonly apiRequests: number;
}

type Counted = PortalJob['dashboardApi']['counts'][number];

/** The API's requests for the dashboard's counts: per company where its today or window matters, else over the scope. */
function dashboardAsks(windows: readonly (readonly [number, DueWindow])[], home: DueWindow): Counted[] {
  const months = Array.from({ length: 13 }, (_, n) => `${monthAfter(home.today, n)}-01`);
  const asks: Counted[] = [];
  for (const [id, w] of windows) {
    asks.push({ path: `/3.0/assets/company_id=${id}/next_check<${w.today}`, count: 'Overdue' });
    asks.push({ path: `/3.0/assets/company_id=${id}/next_check+${w.today}/next_check-${w.soon}`, count: 'Due soon' });
    asks.push({ path: `/3.0/assets/company_id=${id}/next_check+${w.today}/next_check<${months[1]}`, count: 'month' });
  }
  for (let n = 1; n < 12; n++) asks.push({ path: `/3.0/assets/next_check+${months[n]}/next_check<${months[n + 1]}`, count: 'month' });
  asks.push({ path: '/3.0/assets/last_result=fail', count: 'Out of tolerance' });
  asks.push({ path: '/3.0/assetqueue/released=0', count: 'Awaiting approval' });
  return asks;
}

export async function runPortal(engine: Engine, certPem: string, today: string): Promise<PortalRun> {
  const url = engine === 'postgres' ? await createPgDatabase() : undefined;
  try {
    if (engine === 'sqlite') rmSync(PORTAL_DIR, { recursive: true, force: true });
    const summary = await seed(engine, url, certPem, today, { dataDir: PORTAL_DIR, assets: ROWS, companies: 2 });
    const [root, child] = summary.companies;
    if (!root || !child || summary.assetsInScope !== ROWS) throw new Error(`the portal's store: ${summary.assetsInScope} assets in scope, not ${ROWS}`);
    const database = openDatabase({ url, dataDir: PORTAL_DIR });
    try {
      await sql`UPDATE companies SET data = ${CHILD_DATA} WHERE id = ${child.id}`.execute(database.db);
      await sql`UPDATE assets SET last_result = 'fail' WHERE id % 50 = 0`.execute(database.db);
      await setPassword(database, await addUser(database, { companyId: root.id, username: USER.username, email: 'portal@bench.test' }), USER.password);
      if (engine === 'postgres') await sql`VACUUM ANALYZE`.execute(database.db);
    } finally {
      await database.close();
    }

    const now = new Date();
    const windows = [[root.id, windowAt(settingsOf(root.id, null), now)], [child.id, windowAt(settingsOf(child.id, CHILD_DATA), now)]] as const;
    const home = windows[0][1];
    const latest = windows.map(([, w]) => w.today).sort()[1]!;
    const counts = dashboardAsks(windows, home);
    const worst: ApiAsk = { path: `/3.0/assets/next_check<${latest}`, order: 'next_check,asset_no' };
    const listApi: ApiAsk = { path: `/3.0/assets/next_check<${home.today}`, order: 'asset_no' };
    const portalPort = await freePort();
    const spec = service({ url, dataDir: PORTAL_DIR });
    const db = engineLabel(engine);
    const row = await measureServer(
      announce(`portal, ${db}`, `${PORTAL_WARMUPS} warm-up + ${PORTAL_ITERATIONS} rounds, one request at a time: the dashboard, `
        + `its ${counts.length + 1} API requests, /assets?due_before=${home.today}, GET ${listApi.path} (order asset_no); `
        + `windows ${windows.map(([id, w]) => `${id}: ${w.today}…${w.soon}`).join(', ')}, chart to ${addDays(`${monthAfter(home.today, 12)}-01`, -1)}`),
      { args: spec.args, env: { ...spec.env, PORTAL_PORT: String(portalPort) } },
      {
        script: 'bench/portal-client.ts',
        job: (port): PortalJob => ({
          apiOrigin: `https://127.0.0.1:${port}`, portalOrigin: `https://127.0.0.1:${portalPort}`,
          certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey, ...USER, warmups: PORTAL_WARMUPS, iterations: PORTAL_ITERATIONS,
          dashboardApi: { counts, worst, todays: Object.fromEntries(windows.map(([id, w]) => [String(id), w.today])) },
          listPath: `/assets?due_before=${home.today}`, listApi,
        }),
      },
    );
    return { engine, row, assets: summary.assetsInScope, apiRequests: counts.length + 1 };
  } finally {
    if (engine === 'postgres') await dropPgDatabase();
  }
}
