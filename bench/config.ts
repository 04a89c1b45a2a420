// The benchmark's settings (from the environment) and the files it writes under .bench/.
import { join, resolve } from 'node:path';

const int = (names: readonly string[], fallback: number): number => {
  for (const name of names) {
    const v = process.env[name];
    if (v === undefined || v === '') continue;
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${name} must be a positive integer (got "${v}")`);
    return Number(v);
  }
  return fallback;
};

export const SECONDS = int(['BENCH_SECONDS'], 10);
export const WARMUP = int(['BENCH_WARMUP_SECONDS'], 3);
export const CONNECTIONS = int(['BENCH_CONNECTIONS'], 16);
/** Number of assets; BENCH_ASSETS is the older name. */
export const ROWS = int(['BENCH_ROWS', 'BENCH_ASSETS'], 100_000);
/** Assets the CSV export streams, in one company of a store of their own (EXPORT_DIR). */
export const EXPORT_ROWS = int(['BENCH_EXPORT_ROWS'], 1_000_000);
/** Assets of the printed list's store: about half are overdue, what its list (`next_check<today`) prints (print.ts). */
export const PRINT_ROWS = int(['BENCH_PRINT_ROWS'], 20_800);
export const WITH_PG = process.env.BENCH_PG === '1';

/**
 * The parts of a run: `workloads` (everything measured per database but the portal:
 * the baselines, W1–W9, the stall workload), `export` (the CSV export), `print` (the
 * printed list beside the CSV of the same filter), `portal` (the portal's dashboard and
 * asset list beside the API) and `replica` (W1 and W2 on
 * the primary and on a read replica; only with BENCH_PG=1). BENCH_ONLY names some of
 * them, comma-separated; unset, a run does them all.
 */
export const PARTS = ['workloads', 'export', 'print', 'portal', 'replica'] as const;
export type Part = (typeof PARTS)[number];
const only = (process.env.BENCH_ONLY ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
for (const p of only) if (!(PARTS as readonly string[]).includes(p)) throw new Error(`BENCH_ONLY names parts of ${PARTS.join(', ')} (got "${p}")`);
export const runs = (part: Part): boolean => only.length === 0 || only.includes(part);
export type Engine = 'sqlite' | 'postgres';
export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
export const PG_DATABASE = 'asset_tracker_bench';
export const PAGE_SIZE = 30;
/** RATE_LIMIT of the benchmarked service: the limiter runs on every request, the load never reaches it. */
export const HIGH_RATE_LIMIT = 1_000_000;
/** At this many rows the run also measures W2's latency at a quarter of its peak rate. */
export const LATENCY_RUN_ROWS = 1_000_000;

/** W6 and the bare UPDATE: rows per request, timed iterations after the warm-ups. */
export const UPDATE_ROWS = 5000;
export const UPDATE_ITERATIONS = 15;
export const UPDATE_WARMUPS = 2;

/** W7 and the bare INSERT: new assets per request (the most one PUT takes), timed iterations after the warm-ups. */
export const INSERT_ROWS = 1000;
export const INSERT_ITERATIONS = 10;
export const INSERT_WARMUPS = 2;

/** W8 and the bare check: one check per request, timed iterations after the warm-ups. */
export const CHECK_ITERATIONS = 200;
export const CHECK_WARMUPS = 20;

/** The portal workloads: rounds (dashboard, its API requests, asset list, its API page) after the warm-ups. */
export const PORTAL_ITERATIONS = 200;
export const PORTAL_WARMUPS = 10;

/**
 * The stall workload: the probe's requests per second, how long it probes an idle
 * server, for how long (at least) (c) POSTs, and how long (a) may wait for the
 * first reminder run to end; its CSV import and its due store have BENCH_ROWS rows,
 * at most 100,000 (a million rows' CSV would pass IMPORT_MAX_BYTES).
 */
export const STALL_ROWS = Math.min(ROWS, 100_000);
export const PROBE_RATE = 20;
export const IDLE_PROBE_SECONDS = 10;
export const STALL_POST_SECONDS = 10;
export const FIRST_RUN_TIMEOUT_SECONDS = 900;

/** A page served by the service ÷ the same page served by bare Fastify and prepared statements. */
const PAGE_VS_BARE = { sqlite: 0.8, postgres: 0.6 } as const;

/** The ratios of the issue and their targets. */
export const TARGETS = {
  w1VsStatic: { sqlite: 0.3, postgres: 0.2 },
  w2VsBare: PAGE_VS_BARE,
  w9VsBare: PAGE_VS_BARE,
  w2PgVsSqlite: 0.5,
  w3VsW2: 0.5,
  w6VsBareUpdate: 3,
  w7VsBareInsert: 3,
  w7FullVsEmpty: 1.2,
  w8VsBareCheck: 3,
  rssMiB: 200,
  /** The printed list of about 10,000 assets, on a 2-core machine. */
  printSeconds: 10,
  p50AtQuarterMs: 5,
  /** The portal's dashboard ÷ the API requests that read the same counts and list (p50 of each). */
  dashboardVsApi: 2,
  /** The stall workload's probe, in each part. */
  probeP99Ms: 50,
  probeMaxMs: 250,
} as const;

export const BENCH_DIR = resolve('.bench');
/** DATA_DIR of the SQLite stores: the workloads' (BENCH_ROWS assets), W7's empty one, the stall workload's due one. */
export const SQLITE_DIR = join(BENCH_DIR, 'sqlite');
export const EMPTY_DIR = join(BENCH_DIR, 'empty');
export const DUE_DIR = join(BENCH_DIR, 'due');
/** DATA_DIR of the printed list's SQLite store (and, on PostgreSQL, its database's name). */
export const PRINT_DIR = join(BENCH_DIR, 'print');
export const PRINT_PG_DATABASE = 'asset_tracker_bench_print';
/** DATA_DIR of the CSV export's store, apart from the workloads' (which W6 changes). */
export const EXPORT_DIR = join(BENCH_DIR, 'export');
/** DATA_DIR of the portal workloads' store: BENCH_ROWS assets in a company and its child. */
export const PORTAL_DIR = join(BENCH_DIR, 'portal');
export const TLS_FILES = {
  serverCert: join(BENCH_DIR, 'tls', 'server.pem'),
  serverKey: join(BENCH_DIR, 'tls', 'server.key'),
  clientCert: join(BENCH_DIR, 'tls', 'client.pem'),
  clientKey: join(BENCH_DIR, 'tls', 'client.key'),
};

export const say = (line: string): void => { process.stdout.write(`${line}\n`); };
