// The printed results: one table per database and the issue's ratios beside their targets.
import { TARGETS, say } from './config.ts';
import type { Row } from './measure.ts';
import { engineLabel } from './setup.ts';
import type { EngineRun } from './workloads.ts';

const ms = (v: number | null) => (v === null ? '-' : Number.isInteger(v) || v >= 100 ? v.toFixed(0) : v.toFixed(1));
const mib = (v: number | null) => (v === null ? '-' : v.toFixed(0));

function printTable(title: string, rows: readonly (readonly [string, Row])[]): void {
  const header = ['workload', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'server CPU', 'loadgen CPU', 'other CPU', 'RSS MiB (peak)'];
  const cells = rows.map(([name, r]) => [
    name, r.load.reqPerSec.toFixed(r.load.reqPerSec < 100 ? 1 : 0), ms(r.load.latencyMs.p50), ms(r.load.latencyMs.p90), ms(r.load.latencyMs.p99),
    ms(r.load.latencyMs.max), `${r.serverCpuPercent.toFixed(0)}%`, r.rssMiB === null ? '-' : `${r.load.clientCpuPercent.toFixed(0)}%`,
    `${r.otherCpuPercent.toFixed(0)}%`, r.rssMiB === null ? '-' : `${mib(r.rssMiB)} (${mib(r.peakRssMiB)})`,
  ]);
  printColumns(title, header, cells);
}

/** A table: the first column left-aligned, the others right-aligned. */
function printColumns(title: string, header: readonly string[], cells: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const format = (c: readonly string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  say(`\n${title}\n${format(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${cells.map(format).join('\n')}`);
}

interface Ratio { readonly name: string; readonly value: number; readonly compare: '≥' | '≤' | '<'; readonly target: number; readonly unit?: string }

function printRatios(ratios: readonly Ratio[]): void {
  const width = Math.max(...ratios.map((r) => r.name.length));
  for (const r of ratios) {
    const pass = r.compare === '≥' ? r.value >= r.target : r.compare === '≤' ? r.value <= r.target : r.value < r.target;
    // Three digits: a ratio just under its target must not read as the target (0.299 is no 0.30).
    const value = r.unit ? `${ms(r.value)} ${r.unit}` : r.value.toPrecision(3);
    const target = `${r.compare} ${r.target}${r.unit ? ` ${r.unit}` : ''}`;
    say(`  ${r.name.padEnd(width)}  ${value.padStart(9)}   target ${target.padEnd(10)}  ${pass ? 'PASS' : 'MISS'}`);
  }
}

/** The table and ratios of one database; `sqlite` is the SQLite run when this one is PostgreSQL. */
export function printEngine(run: EngineRun, sqlite: EngineRun | null): void {
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
  ];
  if (run.quarter) rows.push(['W2 at 25 % of W2 req/s', run.quarter]);
  printTable(`${db}:`, rows);
  const service = [run.w1, run.w2, run.w3, run.w6, ...(run.quarter ? [run.quarter] : [])];
  const peak = Math.max(...service.map((r) => r.peakRssMiB ?? 0));
  const ratios: Ratio[] = [
    { name: 'W1 ÷ (a)', value: run.w1.load.reqPerSec / staticRow.load.reqPerSec, compare: '≥', target: TARGETS.w1VsStatic[run.engine] },
    { name: 'W2 ÷ bare W2', value: run.w2.load.reqPerSec / run.bareW2.load.reqPerSec, compare: '≥', target: TARGETS.w2VsBare[run.engine] },
    ...(sqlite ? [{ name: 'W2 (PostgreSQL) ÷ W2 (SQLite)', value: run.w2.load.reqPerSec / sqlite.w2.load.reqPerSec, compare: '≥' as const, target: TARGETS.w2PgVsSqlite }] : []),
    { name: 'W3 ÷ W2', value: run.w3.load.reqPerSec / run.w2.load.reqPerSec, compare: '≥', target: TARGETS.w3VsW2 },
    { name: 'W6 median ÷ bare UPDATE (+ audit) median', value: run.w6.load.latencyMs.p50 / run.bareUpdate.load.latencyMs.p50, compare: '≤', target: TARGETS.w6VsBareUpdate },
    { name: 'service peak RSS under load', value: peak, compare: '<', target: TARGETS.rssMiB, unit: 'MiB' },
  ];
  if (run.quarter) ratios.push({ name: 'W2 p50 at 25 % of peak', value: run.quarter.load.latencyMs.p50, compare: '<', target: TARGETS.p50AtQuarterMs, unit: 'ms' });
  say(`ratios, ${db}:`);
  printRatios(ratios);
  say(`  W6: median ${ms(run.w6.load.latencyMs.p50)} ms, p90 ${ms(run.w6.load.latencyMs.p90)} ms per request;`
    + ` bare UPDATE + audit: median ${ms(run.bareUpdate.load.latencyMs.p50)} ms, p90 ${ms(run.bareUpdate.load.latencyMs.p90)} ms`);
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
}

export function printNotes(withQuarter: boolean): void {
  say('\nautocannon latencies have 1 ms resolution; W6 and bare UPDATE are timed per request (median in p50, no p99 of 15)'
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

/** Prints each row whose load saw a problem (non-2xx, error, timeout, wrong body); returns whether there was one. */
export function printFailures(rows: readonly Row[]): boolean {
  const failed = rows.filter((r) => Object.values(r.load.problems).some((n) => n > 0));
  for (const r of failed) {
    process.stderr.write(`\nFAILED ${r.label}: ${JSON.stringify(r.load.problems)} status codes ${JSON.stringify(r.load.statusCodes)}\n`
      + `  first unexpected body: ${r.load.firstMismatch ?? '(none: non-2xx or connection errors only)'}\n`);
  }
  return failed.length > 0;
}
