// `npm run bench`: seeds BENCH_ROWS assets (default 100000; BENCH_ASSETS is the old
// name), then — with the server pinned to core 0 and the load generator to core 1 —
// measures the baselines (a) bare Fastify with static JSON, bare W2 and bare UPDATE,
// and the service's W1, W2, W3 and W6 (workloads.ts), on SQLite and, with
// BENCH_PG=1, on PostgreSQL (BENCH_PG_URL, default
// postgres://root@127.0.0.1:5432/postgres, names the server); prints a table and
// the issue's ratios per database. BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3),
// BENCH_CONNECTIONS (16). At BENCH_ROWS=1000000 it also measures W2's latency at
// 25 % of its peak rate. After the SQLite workloads, the CSV export of
// BENCH_EXPORT_ROWS assets (1000000) from a store of its own (export.ts).
import { formatDate } from '../src/model/dates.ts';
import { say, WITH_PG } from './config.ts';
import { runExport } from './export.ts';
import { printEngine, printExport, printFailures, printNotes } from './report.ts';
import type { SeedSummary } from './seed.ts';
import { createPgDatabase, dropPgDatabase, seed, writeCertificates } from './setup.ts';
import { type EngineRun, runWorkloads } from './workloads.ts';

function describeScope(summary: SeedSummary, today: string): void {
  const scope = summary.companies.filter((c) => c.inScope);
  say(`the benchmark certificate (client ${summary.clientId}) belongs to "${scope[0]!.name}": its scope is companies `
    + `${scope.map((c) => `${c.id} ${c.name}`).join(', ')} (${scope.length} of ${summary.companies.length}),`
    + ` ${summary.assetsInScope} of ${summary.assetsTotal} assets (ids ${summary.scopeIds.first}–${summary.scopeIds.last}),`
    + ` ${summary.overdueInScope} with next_check < ${today}`);
}

async function main(): Promise<number> {
  const started = Date.now();
  const certPem = writeCertificates();
  const today = formatDate(new Date());
  const summary = await seed('sqlite', undefined, certPem, today);
  describeScope(summary, today);
  const runs: EngineRun[] = [await runWorkloads({ engine: 'sqlite', url: undefined, summary, today })];
  const exported = await runExport(certPem, today);
  if (WITH_PG) {
    const url = await createPgDatabase();
    try {
      const pgSummary = await seed('postgres', url, certPem, today);
      runs.push(await runWorkloads({ engine: 'postgres', url, summary: pgSummary, today }));
    } finally {
      await dropPgDatabase();
    }
  }

  for (const run of runs) printEngine(run, run.engine === 'postgres' ? runs[0]! : null);
  printExport(exported);
  printNotes(runs.some((r) => r.quarter !== null));
  say(`total time ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const all = [exported, ...runs.flatMap((r) => [r.staticRow, r.bareW2, r.bareUpdate, r.w1, r.w1Unlimited, r.w2, r.w3, r.w6, ...(r.quarter ? [r.quarter] : [])])];
  return printFailures(all) ? 1 : 0;
}

process.exitCode = await main();
