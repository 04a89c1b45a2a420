// The stall workload's table: per part the probe's p50, p99 and maximum over the
// part's window beside the targets, and what ran beside the probe; the CSV import's
// figures (its part (b)).
import { PROBE_RATE, say, STALL_ROWS, TARGETS } from './config.ts';
import type { EngineResults } from './engine-run.ts';
import { meets, mib, ms, printColumns, type Ratio } from './report-format.ts';
import { engineLabel } from './setup.ts';
import type { FirstRun, StallRow } from './stall-measure.ts';

const seconds = (s: number | null) => (s === null ? 'not ended within the part' : `${s.toFixed(1)} s`);
const verdict = (value: number, target: number) => (meets(value, '<', target) ? 'PASS' : 'MISS');

function firstRunText(run: FirstRun): string {
  const r = run.reminders;
  return `${seconds(run.seconds)}${r ? ` (${r.created} reminders made, ${r.delivered} delivered, ${r.messages} messages)` : ''}`;
}

/** The import of (b), in seconds (its one request). */
const importSeconds = (row: StallRow) => (row.worker ? row.worker.latencyMs.max / 1000 : NaN);

export function csvImportRatio(row: StallRow): Ratio {
  return { name: `CSV import of ${STALL_ROWS} rows, beside the probe`, value: importSeconds(row), compare: '<', target: null, unit: 's' };
}

export function printStall(results: EngineResults): void {
  const { idle, firstRun, csvImport, posts } = results.stall;
  const db = engineLabel(results.engine);
  const parts: [string, StallRow, string][] = [
    ['idle server', idle, `nothing; first background run ${firstRunText(idle.firstRun)}`],
    ['(a) first reminder run', firstRun, `the run: ${firstRunText(firstRun.firstRun)}`],
    ['(b) CSV import', csvImport, csvImport.worker ? `import ${ms(csvImport.worker.latencyMs.max)} ms; first background run ${seconds(csvImport.firstRun.seconds)}` : '-'],
    ['(c) 5,000-row POSTs', posts, posts.worker
      ? `${posts.worker.ok} POSTs, median ${ms(posts.worker.latencyMs.p50)} ms, max ${ms(posts.worker.latencyMs.max)} ms; first background run ${seconds(posts.firstRun.seconds)}`
      : '-'],
  ];
  const { probeP99Ms: p99, probeMaxMs: max } = TARGETS;
  printColumns(`stall, ${db}: probe GET /3.0/assets/id=N, ${PROBE_RATE} req/s on one keep-alive connection, each timed from when it was due;`
    + ' the service started fresh for each part, probed from when it answers',
  ['part', 'window s', 'probes', 'p50 ms', 'p99 ms', 'max ms', 'max at s', `p99 < ${p99} ms`, `max < ${max} ms`, 'RSS MiB (peak)'],
  parts.map(([name, r]) => [name, r.window.seconds.toFixed(1), String(r.window.probes), ms(r.window.p50), ms(r.window.p99), ms(r.window.max),
    r.window.maxAtSeconds.toFixed(1), verdict(r.window.p99, p99), verdict(r.window.max, max), `${mib(r.rssMiB)} (${mib(r.peakRssMiB)})`]));
  for (const [name, , beside] of parts) say(`  ${name}: ${beside}`);
  const imported = importSeconds(csvImport);
  say(`  (b) CSV import: ${STALL_ROWS} rows in ${imported.toFixed(1)} s (${(STALL_ROWS / imported).toFixed(0)} rows/s),`
    + ` server peak RSS ${mib(csvImport.peakRssMiB)} MiB`);
  const missed = parts.filter(([, r]) => !meets(r.window.p99, '<', p99) || !meets(r.window.max, '<', max)).map(([name]) => name);
  say(`  stall targets (p99 < ${p99} ms, max < ${max} ms in every part): ${missed.length === 0 ? 'PASS' : `MISS (${missed.join(', ')})`}`);
}

export function stallFailures(results: EngineResults): string[] {
  return Object.values(results.stall).flatMap((r: StallRow) => r.problems.map((p) => `${r.label}: ${p}`));
}
