// The load generator (one process, pinned by run.ts): autocannon over mutual TLS
// with the benchmark's client certificate. Warms up, then measures, checking
// every response body. Reads its job as JSON from argv[2]; prints `MEASURING`
// when the measured run starts and `RESULT <json>` at the end.
import autocannon, { type Result } from 'autocannon';
import { readFileSync } from 'node:fs';
import { STATIC_BODY } from './payload.ts';

export type Check =
  | { readonly kind: 'static' }
  | { readonly kind: 'assets'; readonly totalRecords: number; readonly pageSize: number; readonly before: string; readonly scope: readonly number[] };

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

export interface LoadResult {
  readonly reqPerSec: number;
  readonly ok: number;
  readonly seconds: number;
  readonly bytesPerResponse: number;
  readonly latencyMs: { readonly avg: number; readonly p50: number; readonly p99: number; readonly max: number };
  readonly problems: { readonly non2xx: number; readonly errors: number; readonly timeouts: number; readonly mismatches: number };
  readonly statusCodes: Record<string, number>;
  readonly clientCpuPercent: number;
  readonly firstMismatch: string | null;
}

interface AssetsPage {
  request?: { url?: unknown; endpoint?: unknown; request_method?: unknown };
  pagination?: { total_pages?: unknown; total_records?: unknown };
  response?: { id?: unknown; company_id?: unknown; next_check?: unknown }[];
}

/** Why a body is not the expected one, or null when it is. */
function problemOf(body: string, job: LoadJob): string | null {
  const check = job.check;
  if (check.kind === 'static') return body === STATIC_BODY ? null : 'not the static body';
  let page: AssetsPage;
  try { page = JSON.parse(body) as AssetsPage; } catch { return 'not JSON'; }
  const expectedLength = Math.min(check.pageSize, check.totalRecords);
  if (page.request?.url !== job.path || page.request.endpoint !== 'assets' || page.request.request_method !== 'Get') return 'request block';
  if (page.pagination?.total_records !== check.totalRecords) return `total_records ${String(page.pagination?.total_records)} != ${check.totalRecords}`;
  if (page.pagination.total_pages !== Math.ceil(check.totalRecords / check.pageSize)) return 'total_pages';
  if (!Array.isArray(page.response) || page.response.length !== expectedLength) return 'page length';
  let lastId = 0;
  for (const a of page.response) {
    if (typeof a.id !== 'number' || a.id <= lastId) return 'order';
    lastId = a.id;
    if (!check.scope.includes(a.company_id as number)) return `company ${String(a.company_id)} outside the scope`;
    if (typeof a.next_check !== 'string' || a.next_check >= check.before) return `next_check ${String(a.next_check)}`;
  }
  return null;
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
      const problem = problemOf(body, job);
      if (problem !== null) firstMismatch ??= `${problem}: ${body.slice(0, 300)}`;
      return problem === null;
    },
  };
  const warm: Result = await autocannon({ ...options, duration: job.warmupSeconds });
  process.stdout.write('MEASURING\n');
  const cpu = process.cpuUsage();
  const r: Result = await autocannon({ ...options, duration: job.seconds });
  const used = process.cpuUsage(cpu);
  const result: LoadResult = {
    reqPerSec: r.requests.average,
    ok: r['2xx'],
    seconds: r.duration,
    bytesPerResponse: r['2xx'] > 0 ? r.throughput.total / r['2xx'] : 0,
    latencyMs: { avg: r.latency.average, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
    problems: {
      non2xx: r.non2xx + warm.non2xx, errors: r.errors + warm.errors,
      timeouts: r.timeouts + warm.timeouts, mismatches: r.mismatches + warm.mismatches,
    },
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count])),
    clientCpuPercent: (100 * (used.user + used.system)) / (r.duration * 1e6),
    firstMismatch,
  };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

await main(JSON.parse(process.argv[2]!) as LoadJob);
