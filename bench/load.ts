// The load generator (one process, pinned by run.ts): autocannon over mutual TLS
// with the benchmark's client certificate. Warms up, then measures, checking
// every response body. Reads its job as JSON from argv[2]; prints `MEASURING`
// when the measured run starts and `RESULT <json>` at the end.
import autocannon, { type Result } from 'autocannon';
import { readFileSync } from 'node:fs';
import { type Check, problemOf } from './checks.ts';
import { announceMeasuring, type LoadResult, printResult } from './result.ts';

export interface LoadJob {
  readonly origin: string;
  readonly path: string;
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly check: Check;
}

async function main(job: LoadJob): Promise<void> {
  let firstMismatch: string | null = null;
  const options = {
    url: job.origin,
    requests: [{ method: 'GET', path: job.path }],
    connections: job.connections,
    pipelining: 1,
    servername: 'localhost',
    tlsOptions: { cert: readFileSync(job.certFile), key: readFileSync(job.keyFile), minVersion: 'TLSv1.2' as const },
    verifyBody: (body: string) => {
      const problem = problemOf(body, job.path, job.check);
      if (problem !== null) firstMismatch ??= `${problem}: ${body.slice(0, 300)}`;
      return problem === null;
    },
  };
  const warm: Result = await autocannon({ ...options, duration: job.warmupSeconds });
  announceMeasuring();
  const cpu = process.cpuUsage();
  const r: Result = await autocannon({ ...options, duration: job.seconds });
  const used = process.cpuUsage(cpu);
  printResult({
    reqPerSec: r.requests.average,
    ok: r['2xx'],
    seconds: r.duration,
    bytesPerResponse: r['2xx'] > 0 ? r.throughput.total / r['2xx'] : 0,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    problems: {
      non2xx: r.non2xx + warm.non2xx, errors: r.errors + warm.errors,
      timeouts: r.timeouts + warm.timeouts, mismatches: r.mismatches + warm.mismatches,
    },
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count])),
    clientCpuPercent: (100 * (used.user + used.system)) / (r.duration * 1e6),
    firstMismatch,
  } satisfies LoadResult);
}

await main(JSON.parse(process.argv[2]!) as LoadJob);
