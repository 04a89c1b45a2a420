// W9 and W8 and their baselines on the workloads' store, after the other reads and
// W6 (seed-checks.ts seeded what they need):
//   W9, the first page (30) of an asset's 100 checks with their embeds, GET
//     /3.0/assetchecks/asset_id=N as fast as the service answers (autocannon, as W2),
//     just after bare W9 (baseline-checks.ts) answers the same page;
//   W8, one check with 20 points and 2 standards per PUT /3.0/assetchecks, requests
//     one after another on one connection (sequential.ts, as W7: each answer checked,
//     201, records_inserted 1), just after the bare check (bare-check.ts) writes the
//     same rows by hand, timed directly.
import { addDays } from '../src/model/dates.ts';
import type { BareCheckJob } from './bare-check.ts';
import { checkBodies, type CheckBodySpec, POINTS_PER_CHECK, STANDARDS_PER_CHECK } from './check-bodies.ts';
import type { CheckPage } from './checks-page.ts';
import { CHECK_ITERATIONS, CHECK_WARMUPS, PAGE_SIZE, TLS_FILES } from './config.ts';
import { measureDirect, measureServer, type Row } from './measure.ts';
import type { SequentialJob } from './sequential.ts';
import { engineLabel } from './setup.ts';
import { announce, auditSource, getLoader, loadText, type Seeded, service, sqliteFile } from './workloads.ts';

export interface CheckRun {
  /** Checks of W9's asset, and points per check. */
  readonly historyChecks: number;
  readonly points: number;
  readonly bareW9: Row;
  readonly w9: Row;
  readonly bareCheck: Row;
  readonly w8: Row;
}

export async function runCheckWorkloads(t: Seeded): Promise<CheckRun> {
  const seeded = t.summary.checks;
  if (!seeded) throw new Error('the workloads\' store has no checks seeded');
  const db = engineLabel(t.engine);
  const w9Path = `/3.0/assetchecks/asset_id=${seeded.historyAsset}`;
  const w9Check: CheckPage = {
    kind: 'assetchecks', totalRecords: seeded.historyChecks, pageSize: PAGE_SIZE, assetId: seeded.historyAsset, points: POINTS_PER_CHECK,
    standards: STANDARDS_PER_CHECK,
  };
  const bareW9 = await measureServer(announce(`bare W9, ${db}`, loadText(w9Path)), {
    args: ['--import', 'tsx', 'bench/baseline-checks.ts'],
    env: { DATABASE_URL: t.url ?? '', SQLITE_FILE: sqliteFile(t), PAGE_SIZE: String(PAGE_SIZE), BASE_URL: '' },
  }, getLoader(w9Path, w9Check));
  const w9 = await measureServer(announce(`W9, ${db}`, loadText(w9Path)), service(t), getLoader(w9Path, w9Check));

  const spec: CheckBodySpec = { assetId: seeded.checkedAsset, standards: seeded.standards.slice(0, STANDARDS_PER_CHECK), today: t.today };
  // Beyond the reminder window: W8's asset stays out of W2's count and of the reminders.
  const nextChecks = [addDays(t.today, 365), addDays(t.today, 350)] as const;
  const runs = `${CHECK_WARMUPS} warm-ups + ${CHECK_ITERATIONS}`;
  const job: BareCheckJob = {
    databaseUrl: t.url, sqliteFile: sqliteFile(t), check: spec, nextChecks, warmups: CHECK_WARMUPS, iterations: CHECK_ITERATIONS, audit: auditSource(t),
  };
  const bareCheck = await measureDirect(announce(`bare check, ${db}`, `${runs} transactions recording one check of asset ${spec.assetId} `
    + `(its ${STANDARDS_PER_CHECK} standards' latest checks, the asset read and updated, the check, its links and 2 audit rows) on the bare tables, no HTTP`),
  'bench/bare-check.ts', job);
  const w8 = await measureServer(announce(`W8, ${db}`, `${runs} requests one after another on one connection, PUT /3.0/assetchecks of one check `
    + `of asset ${spec.assetId} with ${POINTS_PER_CHECK} points and ${STANDARDS_PER_CHECK} standards`), service(t), {
    script: 'bench/sequential.ts',
    job: (port): SequentialJob => ({
      origin: `https://127.0.0.1:${port}`, method: 'PUT', path: '/3.0/assetchecks', bodies: { kind: 'given', bodies: checkBodies(spec, nextChecks) },
      status: 201, warmups: CHECK_WARMUPS, iterations: CHECK_ITERATIONS, certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey,
      check: { kind: 'inserted', records: 1 },
    }),
  });
  return { historyChecks: seeded.historyChecks, points: POINTS_PER_CHECK, bareW9, w9, bareCheck, w8 };
}
