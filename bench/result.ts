// What a load generator reports back to run.ts: one `RESULT <json>` line on stdout,
// after a `MEASURING` line when the measured part starts.

/** One timed series of a client that measures several (portal-client.ts), in ms. */
export interface Series { readonly n: number; readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number }

export interface LoadResult {
  readonly reqPerSec: number;
  readonly ok: number;
  readonly seconds: number;
  readonly bytesPerResponse: number;
  /** p99 is null when too few requests were timed for it to mean anything. */
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number | null; readonly max: number };
  readonly problems: { readonly non2xx: number; readonly errors: number; readonly timeouts: number; readonly mismatches: number };
  readonly statusCodes: Record<string, number>;
  readonly clientCpuPercent: number;
  readonly firstMismatch: string | null;
  /** Data rows of the CSV export that arrived (export-client.ts only). */
  readonly records?: number;
  /** The series of a client that times several requests side by side (portal-client.ts only). */
  readonly series?: Readonly<Record<string, Series>>;
  /** Pages of a printed list (print-client.ts only). */
  readonly pages?: number;
}

export const announceMeasuring = (): void => { process.stdout.write('MEASURING\n'); };
export const printResult = (result: LoadResult): void => { process.stdout.write(`RESULT ${JSON.stringify(result)}\n`); };

/** The value below which `q` (0..1) of the sorted samples fall (nearest rank). */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** What one timed request (a whole export or printed list) gave, as a LoadResult. */
export interface OneRequest {
  readonly ms: number;
  /** The client's CPU during it (process.cpuUsage's difference). */
  readonly used: NodeJS.CpuUsage;
  /** 0 when the request failed before an answer. */
  readonly status: number;
  readonly bytes: number;
  readonly problem: string | null;
  readonly error: string | null;
  readonly records: number;
}

export const oneRequestResult = (r: OneRequest): LoadResult => ({
  reqPerSec: 1000 / r.ms,
  ok: r.status === 200 ? 1 : 0,
  seconds: r.ms / 1000,
  bytesPerResponse: r.bytes,
  latencyMs: { p50: r.ms, p90: r.ms, p99: null, max: r.ms },
  problems: { non2xx: r.status !== 0 && r.status !== 200 ? 1 : 0, errors: r.status === 0 ? 1 : 0, timeouts: 0, mismatches: r.problem === null ? 0 : 1 },
  statusCodes: r.status === 0 ? {} : { [r.status]: 1 },
  clientCpuPercent: (100 * (r.used.user + r.used.system)) / (r.ms * 1000),
  firstMismatch: r.problem ?? r.error,
  records: r.records,
});
