// The loop of the direct baselines (bare-update.ts, bare-insert.ts): warm-ups, then
// timed iterations one after another; prints `MEASURING` after the warm-ups and
// `RESULT <json>` at the end (latencies are per iteration, their median in p50;
// "clientCpuPercent" is this process's own CPU).
import { announceMeasuring, percentile, printResult } from './result.ts';

/** One iteration: what it needs is made first, untimed; `run` does the timed work and returns a problem or null. */
export interface Step { readonly run: () => Promise<string | null> }

export async function timeSteps(warmups: number, iterations: number, step: (i: number) => Step): Promise<void> {
  const times: number[] = [];
  let mismatches = 0;
  let firstMismatch: string | null = null;
  let cpu = process.cpuUsage();
  let started = 0;
  for (let i = 0; i < warmups + iterations; i++) {
    if (i === warmups) {
      announceMeasuring();
      cpu = process.cpuUsage();
      started = performance.now();
    }
    const { run } = step(i);
    const t0 = performance.now();
    const problem = await run();
    const ms = performance.now() - t0;
    if (problem !== null) {
      mismatches++;
      firstMismatch ??= problem;
    }
    if (i >= warmups) times.push(ms);
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
