// The printed results: one table per database, the ratios beside their
// targets, the stall table (report-stall.ts), the CSV export, and what failed.
import { INSERT_ROWS, PAGE_SIZE, TARGETS, say } from './config.ts';
import type { EngineResults } from './engine-run.ts';
import type { Row } from './measure.ts';
import { mib, ms, printColumns, printRatios, type Ratio } from './report-format.ts';
import { csvImportRatio, printStall, stallFailures } from './report-stall.ts';
import type { PrintRun } from './print.ts';
import { engineLabel } from './setup.ts';

function printTable(title: string, rows: readonly (readonly [string, Row])[]): void {
  const header = ['workload', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'server CPU', 'loadgen CPU', 'other CPU', 'RSS MiB (peak)'];
  const cells = rows.map(([name, r]) => [
    name, r.load.reqPerSec.toFixed(r.load.reqPerSec < 100 ? 1 : 0), ms(r.load.latencyMs.p50), ms(r.load.latencyMs.p90), ms(r.load.latencyMs.p99),
    ms(r.load.latencyMs.max), `${r.serverCpuPercent.toFixed(0)}%`, r.rssMiB === null ? '-' : `${r.load.clientCpuPercent.toFixed(0)}%`,
    `${r.otherCpuPercent.toFixed(0)}%`, r.rssMiB === null ? '-' : `${mib(r.rssMiB)} (${mib(r.peakRssMiB)})`,
  ]);
  printColumns(title, header, cells);
}

const median = (r: Row) => r.load.latencyMs.p50;

/** The tables and ratios of one database; `sqlite` is the SQLite run when this one is PostgreSQL. */
export function printEngine(results: EngineResults, sqlite: EngineResults | null): void {
  const run = results.main;
  const { empty, full } = results.inserts;
  const { checks } = results;
  const { staticRow } = run;
  const db = engineLabel(run.engine);
  const rows: [string, Row][] = [
    ['(a) bare Fastify, static 1 KB', staticRow],
    ['bare W2 (Fastify + driver)', run.bareW2],
    [`bare UPDATE ${run.updatedRows} rows + audit, no HTTP`, run.bareUpdate],
    ['W1 GET assets.id=N', run.w1],
    ['W1, rate limiter off', run.w1Unlimited],
    ['W2 GET next_check<today', run.w2],
    ['W3 W2 at page=101', run.w3],
    [`W6 POST ${run.updatedRows} rows, sequential`, run.w6],
    [`bare INSERT ${INSERT_ROWS} + audit, ${full.storeAssets} assets`, full.bare],
    [`W7 PUT ${INSERT_ROWS} assets, ${full.storeAssets} assets`, full.w7],
    [`bare INSERT ${INSERT_ROWS} + audit, empty store`, empty.bare],
    [`W7 PUT ${INSERT_ROWS} assets, empty store`, empty.w7],
    [`bare W9 (Fastify + driver), ${PAGE_SIZE} of ${checks.historyChecks} checks`, checks.bareW9],
    [`W9 GET assetchecks/asset_id=N, ${PAGE_SIZE} of ${checks.historyChecks}`, checks.w9],
    ['bare check + 2 links + audit, no HTTP', checks.bareCheck],
    [`W8 PUT 1 check, ${checks.points} points, sequential`, checks.w8],
  ];
  if (run.quarter) rows.push(['W2 at 25 % of W2 req/s', run.quarter]);
  printTable(`${db}:`, rows);
  const service = [run.w1, run.w2, run.w3, run.w6, checks.w9, checks.w8, ...(run.quarter ? [run.quarter] : [])];
  const peak = Math.max(...service.map((r) => r.peakRssMiB ?? 0));
  const ratios: Ratio[] = [
    { name: 'W1 ÷ (a)', value: run.w1.load.reqPerSec / staticRow.load.reqPerSec, compare: '≥', target: TARGETS.w1VsStatic[run.engine] },
    { name: 'W2 ÷ bare W2', value: run.w2.load.reqPerSec / run.bareW2.load.reqPerSec, compare: '≥', target: TARGETS.w2VsBare[run.engine] },
    ...(sqlite ? [{ name: 'W2 (PostgreSQL) ÷ W2 (SQLite)', value: run.w2.load.reqPerSec / sqlite.main.w2.load.reqPerSec, compare: '≥' as const, target: TARGETS.w2PgVsSqlite }] : []),
    { name: 'W3 ÷ W2', value: run.w3.load.reqPerSec / run.w2.load.reqPerSec, compare: '≥', target: TARGETS.w3VsW2 },
    { name: 'W6 median ÷ bare UPDATE (+ audit) median', value: median(run.w6) / median(run.bareUpdate), compare: '≤', target: TARGETS.w6VsBareUpdate },
    { name: 'W7 ÷ bare INSERT (+ audit), empty store', value: median(empty.w7) / median(empty.bare), compare: '≤', target: TARGETS.w7VsBareInsert },
    { name: `W7 ÷ bare INSERT (+ audit), ${full.storeAssets} assets`, value: median(full.w7) / median(full.bare), compare: '≤', target: TARGETS.w7VsBareInsert },
    { name: `W7 at ${full.storeAssets} assets ÷ W7 on the empty store`, value: median(full.w7) / median(empty.w7), compare: '≤', target: TARGETS.w7FullVsEmpty },
    { name: 'W9 ÷ bare W9', value: checks.w9.load.reqPerSec / checks.bareW9.load.reqPerSec, compare: '≥', target: TARGETS.w9VsBare[run.engine] },
    { name: 'W8 median ÷ bare check (+ links, audit) median', value: median(checks.w8) / median(checks.bareCheck), compare: '≤', target: TARGETS.w8VsBareCheck },
    csvImportRatio(results.stall.csvImport),
    { name: 'service peak RSS under load', value: peak, compare: '<', target: TARGETS.rssMiB, unit: 'MiB' },
  ];
  if (run.quarter) ratios.push({ name: 'W2 p50 at 25 % of peak', value: run.quarter.load.latencyMs.p50, compare: '<', target: TARGETS.p50AtQuarterMs, unit: 'ms' });
  say(`ratios, ${db}:`);
  printRatios(ratios);
  say(`  W6: median ${ms(median(run.w6))} ms, p90 ${ms(run.w6.load.latencyMs.p90)} ms per request;`
    + ` bare UPDATE + audit: median ${ms(median(run.bareUpdate))} ms, p90 ${ms(run.bareUpdate.load.latencyMs.p90)} ms`);
  say(`  W7: median ${ms(median(empty.w7))} ms on the empty store, ${ms(median(full.w7))} ms at ${full.storeAssets} assets;`
    + ` bare INSERT + audit: median ${ms(median(empty.bare))} ms and ${ms(median(full.bare))} ms`);
  say(`  W8: median ${ms(median(checks.w8))} ms, p90 ${ms(checks.w8.load.latencyMs.p90)} ms per check;`
    + ` bare check: median ${ms(median(checks.bareCheck))} ms, p90 ${ms(checks.bareCheck.load.latencyMs.p90)} ms`);
  const cpuPerRequest = (r: Row) => (r.serverCpuPercent * 10_000) / r.load.reqPerSec;
  say(`  rate limiter: ${(cpuPerRequest(run.w1) - cpuPerRequest(run.w1Unlimited)).toFixed(1)} µs of server CPU per request`
    + ` (W1 ${cpuPerRequest(run.w1).toFixed(1)} µs with it, ${cpuPerRequest(run.w1Unlimited).toFixed(1)} µs without)`);
  if (run.quarter) {
    const q = run.quarter;
    say(`  latency at 25 % of peak: ${q.load.reqPerSec.toFixed(0)} req/s, p50 ${ms(q.load.latencyMs.p50)} ms, p99 ${ms(q.load.latencyMs.p99)} ms,`
      + ` RSS ${mib(q.rssMiB)} MiB (peak ${mib(q.peakRssMiB)})`);
  }
  // On PostgreSQL the database's own backends count as "other CPU".
  const noisy = run.engine === 'sqlite' ? rows.filter(([, r]) => r.otherCpuPercent > 15) : [];
  if (noisy.length > 0) {
    say(`WARNING: other processes used CPU during ${noisy.map(([name]) => name).join(', ')}; those numbers are low and noisy`);
  }
  printStall(results);
}

export function printNotes(withQuarter: boolean): void {
  say('\nautocannon latencies have 1 ms resolution; W6, W7, W8 and the bare UPDATE, INSERT and check are timed per request (median in p50, no p99)'
    + `${withQuarter ? ', the 25 % run per request from when it was due (requests evenly spaced)' : ''}; CPU 100% = one core; RSS measured after the run;`
    + ' "other CPU" is what the rest of the machine used meanwhile (on PostgreSQL the database backends are in it, so no noise warning there)');
}

/** The CSV export (export.ts): its rows and speed, and the server's peak RSS beside the target. */
export function printExport(r: Row): void {
  const rows = r.load.records ?? 0;
  printColumns('CSV export, SQLite (one mTLS request, GET /3.0/assets, Accept: text/csv):',
    ['export', 'rows', 'seconds', 'rows/s', 'MiB sent', 'server CPU', 'client CPU', 'other CPU', 'RSS MiB (peak)'],
    [['all assets of one company', String(rows), r.load.seconds.toFixed(1), (rows / r.load.seconds).toFixed(0),
      (r.load.bytesPerResponse / 2 ** 20).toFixed(0), `${r.serverCpuPercent.toFixed(0)}%`, `${r.load.clientCpuPercent.toFixed(0)}%`,
      `${r.otherCpuPercent.toFixed(0)}%`, `${mib(r.rssMiB)} (${mib(r.peakRssMiB)})`]]);
  printRatios([{ name: 'service peak RSS, export streamed', value: r.peakRssMiB ?? NaN, compare: '<', target: TARGETS.rssMiB, unit: 'MiB' }]);
}

/** The printed list beside the CSV export of the same filter, per database. */
export function printPrinted(runs: readonly PrintRun[]): void {
  if (runs.length === 0) return;
  const cells = runs.flatMap((run) => ([['CSV', run.csv], ['PDF', run.pdf]] as const).map(([format, r]) => [
    `${engineLabel(run.engine)}, ${format}`, String(run.rows), r.load.pages === undefined ? '-' : String(r.load.pages), r.load.seconds.toFixed(2),
    (r.load.bytesPerResponse / 2 ** 20).toFixed(1), `${r.serverCpuPercent.toFixed(0)}%`, ((r.serverCpuPercent / 100) * r.load.seconds).toFixed(2),
    `${r.otherCpuPercent.toFixed(0)}%`,
    `${mib(r.rssMiB)} (${mib(r.peakRssMiB)})`,
  ]));
  printColumns('Printed list (one mTLS request each, GET /3.0/assets/next_check<TODAY, a fresh server each):',
    ['list', 'rows', 'pages', 'seconds', 'MiB sent', 'server CPU', 'server CPU s', 'other CPU', 'RSS MiB (peak)'], cells);
  printRatios(runs.flatMap((run) => [
    { name: `${engineLabel(run.engine)}: printed list, seconds`, value: run.pdf.load.seconds, compare: '<' as const, target: TARGETS.printSeconds, unit: 's' },
    { name: `${engineLabel(run.engine)}: service peak RSS, printed list`, value: run.pdf.peakRssMiB ?? NaN, compare: '<' as const,
      target: TARGETS.rssMiB, unit: 'MiB' },
  ]));
}

/**
 * Prints each measurement that saw a wrong answer (status, body) or a failed background run; returns whether there was one.
 * `others`: rows of further parts (the portal's).
 */
export function printFailures(exported: Row | null, runs: readonly EngineResults[] = [], others: readonly Row[] = []): boolean {
  const rows = [...(exported ? [exported] : []), ...others, ...runs.flatMap(({ main: r, inserts: i, checks: c }) => [
    r.staticRow, r.bareW2, r.bareUpdate, r.w1, r.w1Unlimited, r.w2, r.w3, r.w6, ...(r.quarter ? [r.quarter] : []),
    c.bareW9, c.w9, c.bareCheck, c.w8, i.full.bare, i.full.w7, i.empty.bare, i.empty.w7])];
  const failed = rows.filter((r) => Object.values(r.load.problems).some((n) => n > 0));
  for (const r of failed) {
    process.stderr.write(`\nFAILED ${r.label}: ${JSON.stringify(r.load.problems)} status codes ${JSON.stringify(r.load.statusCodes)}\n`
      + `  first unexpected body: ${r.load.firstMismatch ?? '(none: non-2xx or connection errors only)'}\n`);
  }
  const stalled = runs.flatMap(stallFailures);
  for (const line of stalled) process.stderr.write(`\nFAILED ${line}\n`);
  return failed.length + stalled.length > 0;
}
