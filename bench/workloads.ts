// The workloads measured on one database: the bare baselines (bare W2, bare UPDATE)
// and the service's W1, W2, W3 and W6 — plus, at 1M rows, W2 at a quarter of its
// peak rate. Reads first, on the freshly seeded (and on PostgreSQL vacuumed)
// data; the writes last. The load starts as soon as the service answers, so the
// background run it makes 5 s after start-up (src/jobs/schedule.ts) lands in it, as
// it would on a live service.
import { join } from 'node:path';
import type { BareUpdateJob } from './bare-update.ts';
import type { AuditSource } from './bare-writes.ts';
import type { Check } from './checks.ts';
import {
  CONNECTIONS, type Engine, HIGH_RATE_LIMIT, LATENCY_RUN_ROWS, PAGE_SIZE, ROWS, say, SECONDS, TLS_FILES,
  UPDATE_ITERATIONS, UPDATE_ROWS, UPDATE_WARMUPS, WARMUP,
} from './config.ts';
import type { LoadJob } from './load.ts';
import { type Loader, measureDirect, measureServer, type Row, type ServerSpec } from './measure.ts';
import type { PacedJob } from './paced.ts';
import type { SeedSummary } from './seed.ts';
import type { SequentialJob } from './sequential.ts';
import { engineLabel } from './setup.ts';

/** A seeded database to measure. */
export interface Seeded {
  readonly engine: Engine;
  /** postgres://… or undefined for SQLite. */
  readonly url: string | undefined;
  /** DATA_DIR of the service: on SQLite its store is there. */
  readonly dataDir: string;
  readonly summary: SeedSummary;
  readonly today: string;
}

export interface EngineRun {
  readonly engine: Engine;
  /** (a), measured just before this database's W1. */
  readonly staticRow: Row;
  readonly bareW2: Row;
  readonly bareUpdate: Row;
  readonly w1: Row;
  /** W1 with the rate limiter off. */
  readonly w1Unlimited: Row;
  readonly w2: Row;
  readonly w3: Row;
  readonly w6: Row;
  /** W2 at a fixed 25 % of its peak rate (only at LATENCY_RUN_ROWS rows). */
  readonly quarter: Row | null;
  /** Rows W6 and the bare UPDATE change per request. */
  readonly updatedRows: number;
}

/** The SQLite file of a store (src/db/database.ts opens DATA_DIR/asset-tracker.sqlite). */
export const sqliteFile = (t: Pick<Seeded, 'dataDir'>): string => join(t.dataDir, 'asset-tracker.sqlite');

/** What the service writes into an audit entry of the benchmark certificate's requests. */
export const auditSource = (t: Seeded): AuditSource => ({ clientId: t.summary.clientId, ip: '127.0.0.1' });

/**
 * The service with its rate limiter on, at a limit the load never reaches (so its
 * cost is in every figure), or off (`rateLimit` '0') to measure that cost; on SQLite
 * it opens the store under `t.dataDir`. It logs at `logLevel` (warn; the stall
 * workload reads the reminder job's `job ran` line at info).
 */
export const service = (t: Pick<Seeded, 'url' | 'dataDir'>, o: { rateLimit?: string; logLevel?: string } = {}): ServerSpec => ({
  args: ['dist/cli/main.js', 'serve'],
  env: { DATA_DIR: t.dataDir, DATABASE_URL: t.url ?? '', HOST: '127.0.0.1', LOG_LEVEL: o.logLevel ?? 'warn', PAGE_SIZE: String(PAGE_SIZE),
    BASE_URL: '', RATE_LIMIT: o.rateLimit ?? String(HIGH_RATE_LIMIT) },
});

const bareList = (t: Seeded): ServerSpec => ({
  args: ['--import', 'tsx', 'bench/baseline-list.ts'],
  env: { DATABASE_URL: t.url ?? '', SQLITE_FILE: sqliteFile(t), PAGE_SIZE: String(PAGE_SIZE), BASE_URL: '' },
});

/** autocannon GETs of `path` as fast as the server answers, every body checked. */
export function getLoader(path: string, check: Check): Loader {
  return {
    script: 'bench/load.ts',
    job: (port): LoadJob => ({
      origin: `https://127.0.0.1:${port}`, path, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP,
      certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey, check,
    }),
  };
}

/** GETs of `path` at `rate` per second, evenly spaced, every body checked. */
function pacedLoader(path: string, check: Check, rate: number): Loader {
  return {
    script: 'bench/paced.ts',
    job: (port): PacedJob => ({
      origin: `https://127.0.0.1:${port}`, path, rate, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP,
      certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey, check,
    }),
  };
}

/** (a): a bare Fastify route answering 1 KB of static JSON over the same mTLS. */
export const staticBaseline = (): Promise<Row> => measureServer(
  announce('(a) bare Fastify, mTLS, static 1 KB', loadText('/static')),
  { args: ['--import', 'tsx', 'bench/baseline-server.ts'], env: {} },
  getLoader('/static', { kind: 'static' }),
);

export function announce(label: string, what: string): string {
  say(`${label}: ${what}`);
  return label;
}
export const loadText = (path: string, rate?: number) => `warming up ${WARMUP} s, measuring ${SECONDS} s, `
  + `${rate === undefined ? `${CONNECTIONS} connections` : `${rate} req/s evenly spaced over up to ${CONNECTIONS} connections`}, GET ${path}`;

/** W6's request bodies, in turn: every request changes its rows. */
export const W6_BODIES = { kind: 'given', bodies: ['{"status":"Bench A"}', '{"status":"Bench B"}'] } as const;

export async function runWorkloads(t: Seeded): Promise<EngineRun> {
  const db = engineLabel(t.engine);
  const scope = t.summary.companies.filter((c) => c.inScope).map((c) => c.id);
  const overdue = `/3.0/assets/next_check<${t.today}`;
  const w2Check: Check = { kind: 'assets', totalRecords: t.summary.overdueInScope, pageSize: PAGE_SIZE, page: 1, before: t.today, scope };
  const { first } = t.summary.scopeIds;
  const w1Id = first + Math.floor(t.summary.assetsInScope / 2);
  const w1Path = `/3.0/assets/assets.id=${w1Id}`;
  const w3Path = `${overdue}/page=101`;

  // Each ratio's two sides are measured one right after the other: this machine's speed drifts by 10–20 % over minutes.
  const staticRow = await staticBaseline();
  const w1 = await measureServer(announce(`W1, ${db}`, loadText(w1Path)), service(t),
    getLoader(w1Path, { kind: 'assets', totalRecords: 1, pageSize: PAGE_SIZE, page: 1, scope, id: w1Id }));
  const w1Unlimited = await measureServer(announce(`W1 without rate limit, ${db}`, loadText(w1Path)), service(t, { rateLimit: '0' }),
    getLoader(w1Path, { kind: 'assets', totalRecords: 1, pageSize: PAGE_SIZE, page: 1, scope, id: w1Id }));
  const bareW2 = await measureServer(announce(`bare W2, ${db}`, loadText(overdue)), bareList(t), getLoader(overdue, w2Check));
  const w2 = await measureServer(announce(`W2, ${db}`, loadText(overdue)), service(t), getLoader(overdue, w2Check));
  const w3 = await measureServer(announce(`W3, ${db}`, loadText(w3Path)), service(t), getLoader(w3Path, { ...w2Check, page: 101 }));
  let quarter: Row | null = null;
  if (ROWS >= LATENCY_RUN_ROWS) {
    const rate = Math.max(1, Math.round(w2.load.reqPerSec / 4));
    quarter = await measureServer(announce(`W2 at 25 % of peak, ${db}`, loadText(overdue, rate)), service(t), pacedLoader(overdue, w2Check, rate));
  }

  const rows = Math.min(UPDATE_ROWS, t.summary.assetsInScope);
  const last = first + rows - 1;
  const updateJob: BareUpdateJob = {
    databaseUrl: t.url, sqliteFile: sqliteFile(t), first, last, statuses: ['Bare A', 'Bare B'], warmups: UPDATE_WARMUPS, iterations: UPDATE_ITERATIONS,
    audit: auditSource(t),
  };
  const bareUpdate = await measureDirect(
    announce(`bare UPDATE, ${db}`,
      `${UPDATE_WARMUPS} warm-ups + ${UPDATE_ITERATIONS} UPDATEs of ids ${first}–${last} of bare_assets with their audit rows, no HTTP`), 'bench/bare-update.ts', updateJob);
  const w6Path = `/3.0/assets/id+${first}/id-${last}`;
  const w6: Loader = {
    script: 'bench/sequential.ts',
    job: (port): SequentialJob => ({
      origin: `https://127.0.0.1:${port}`, method: 'POST', path: w6Path, bodies: W6_BODIES,
      warmups: UPDATE_WARMUPS, iterations: UPDATE_ITERATIONS, certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey,
      check: { kind: 'updated', records: rows },
    }),
  };
  const w6Row = await measureServer(
    announce(`W6, ${db}`, `${UPDATE_WARMUPS} warm-ups + ${UPDATE_ITERATIONS} requests one after another on one connection, POST ${w6Path}`), service(t), w6);
  return { engine: t.engine, staticRow, bareW2, bareUpdate, w1, w1Unlimited, w2, w3, w6: w6Row, quarter, updatedRows: rows };
}
