// Baseline "bare UPDATE" (pinned by run.ts to the server's core): the one UPDATE of
// W6's rows, timed directly against the database, no HTTP; the status alternates
// so that every run really changes the rows. Reads its job as JSON from argv[2];
// prints `MEASURING` after the warm-ups and `RESULT <json>` at the end (latencies
// are per UPDATE; "clientCpuPercent" is this process's own CPU).
import { formatDatetime } from '../src/model/dates.ts';
import { openBareDriver } from './bare-driver.ts';
import { announceMeasuring, percentile, printResult } from './result.ts';

export interface BareUpdateJob {
  readonly databaseUrl: string | undefined;
  readonly sqliteFile: string;
  readonly first: number;
  readonly last: number;
  readonly statuses: readonly string[];
  readonly warmups: number;
  readonly iterations: number;
}

async function main(job: BareUpdateJob): Promise<void> {
  const driver = openBareDriver(job.databaseUrl, job.sqliteFile, 1);
  const expected = job.last - job.first + 1;
  const times: number[] = [];
  let mismatches = 0;
  let firstMismatch: string | null = null;
  let cpu = process.cpuUsage();
  let started = 0;
  try {
    for (let i = 0; i < job.warmups + job.iterations; i++) {
      if (i === job.warmups) {
        announceMeasuring();
        cpu = process.cpuUsage();
        started = performance.now();
      }
      const t0 = performance.now();
      const changed = await driver.update(job.statuses[i % job.statuses.length]!, formatDatetime(new Date()), job.first, job.last);
      const ms = performance.now() - t0;
      if (changed !== expected) {
        mismatches++;
        firstMismatch ??= `changed ${changed} rows, not ${expected}`;
      }
      if (i >= job.warmups) times.push(ms);
    }
  } finally {
    await driver.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const sorted = [...times].sort((a, b) => a - b);
  printResult({
    reqPerSec: times.length / seconds, ok: times.length - mismatches, seconds, bytesPerResponse: 0,
    latencyMs: { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: null, max: sorted[sorted.length - 1]! },
    problems: { non2xx: 0, errors: 0, timeouts: 0, mismatches }, statusCodes: {},
    clientCpuPercent: (100 * (used.user + used.system)) / (seconds * 1e6), firstMismatch,
  });
}

await main(JSON.parse(process.argv[2]!) as BareUpdateJob);
