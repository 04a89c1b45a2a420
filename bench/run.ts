// `npm run bench`: on SQLite and, with BENCH_PG=1, on PostgreSQL (BENCH_PG_URL,
// default postgres://root@127.0.0.1:5432/postgres, names the server), with the
// server pinned to core 0 and the load generator to core 1, measures (engine-run.ts)
// the baselines — (a) bare Fastify with static JSON, bare W2 and bare W9, and the bare
// UPDATE, INSERT and check on plain tables — the service's W1, W2, W3, W6, W7, W8 and
// W9, and the stall workload; prints a table, the ratios and the stall table
// per database.
// BENCH_ROWS assets (default 100000; BENCH_ASSETS is the old name), BENCH_SECONDS
// (10), BENCH_WARMUP_SECONDS (3), BENCH_CONNECTIONS (16). At BENCH_ROWS=1000000 it
// also measures W2's latency at 25 % of its peak rate. After the SQLite workloads,
// the CSV export of BENCH_EXPORT_ROWS assets (1000000) from a store of its own
// (export.ts). Then the printed list of about 10,000 overdue assets beside the CSV
// export of the same filter (print.ts) and the portal's dashboard and asset list beside
// the API requests that read the same data (portal.ts), on each database; with
// BENCH_PG=1, last, the read replica's part (replica.ts): W1 and W2 reading the primary
// and reading a streaming replica, and the replica's lag under W6. BENCH_ONLY=portal (or
// workloads, export, print, replica; comma-separated) runs only those parts. Exits
// non-zero when any answer was wrong; a missed target does not.
import { formatDate } from '../src/model/dates.ts';
import { runs as runsPart, say, WITH_PG } from './config.ts';
import { type EngineResults, runEngine } from './engine-run.ts';
import { runExport } from './export.ts';
import { type PortalRun, runPortal } from './portal.ts';
import { runPrinted } from './print.ts';
import { printReplica, replicaFailed, runReplica } from './replica.ts';
import { printEngine, printExport, printFailures, printNotes, printPrinted } from './report.ts';
import { printPortal } from './report-portal.ts';
import { writeCertificates } from './setup.ts';

async function main(): Promise<number> {
  const started = Date.now();
  const certPem = writeCertificates();
  const today = formatDate(new Date());
  const engines = WITH_PG ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  const runs: EngineResults[] = [];
  if (runsPart('workloads')) runs.push(await runEngine('sqlite', certPem, today));
  const exported = runsPart('export') ? await runExport(certPem, today) : null;
  if (WITH_PG && runsPart('workloads')) runs.push(await runEngine('postgres', certPem, today));
  const printed = runsPart('print') ? await runPrinted(certPem, today) : [];
  const portal: PortalRun[] = [];
  if (runsPart('portal')) for (const engine of engines) portal.push(await runPortal(engine, certPem, today));
  const replica = WITH_PG && runsPart('replica') ? await runReplica(certPem, today) : null;

  for (const run of runs) printEngine(run, run.engine === 'postgres' && runs[0]?.engine === 'sqlite' ? runs[0] : null);
  if (exported) printExport(exported);
  printPrinted(printed);
  printPortal(portal);
  if (replica) printReplica(replica);
  if (runs.length > 0) printNotes(runs.some((r) => r.main.quarter !== null));
  say(`total time ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const others = [...printed.flatMap((p) => [p.csv, p.pdf]), ...portal.map((p) => p.row)];
  return printFailures(exported, runs, others) || (replica !== null && replicaFailed(replica)) ? 1 : 0;
}

process.exitCode = await main();
