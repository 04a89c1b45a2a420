// The read replica (DATABASE_READ_URL), with BENCH_PG=1 when one can be made: W1 and
// W2 against one instance reading the primary, then the same instance reading a
// streaming replica on this machine (deploy/pg-replica.sh, made for the run and removed
// after it unless one was already running), one right after the other; then the
// replica's lag while W6's 5,000-row POSTs run, sampled every 100 ms.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Check } from './checks.ts';
import { PAGE_SIZE, PG_ADMIN_URL, ROWS, say, TLS_FILES, UPDATE_ITERATIONS, UPDATE_ROWS, UPDATE_WARMUPS } from './config.ts';
import { type Loader, measureServer, type Row } from './measure.ts';
import { ms, printColumns } from './report-format.ts';
import type { SequentialJob } from './sequential.ts';
import { createPgDatabase, dropPgDatabase, seed } from './setup.ts';
import { announce, getLoader, loadText, service, W6_BODIES } from './workloads.ts';

const run = promisify(execFile);
const SCRIPT = join('deploy', 'pg-replica.sh');
/** A database of its own: the other parts' may be in use by another run on the same server. */
const PG_DATABASE = 'asset_tracker_bench_replica';

export interface ReplicaRun {
  readonly w1: { readonly primary: Row; readonly replica: Row };
  readonly w2: { readonly primary: Row; readonly replica: Row };
  readonly w6: Row;
  /** The replica's lag while W6 ran: by time (the contract's measure) and in bytes of WAL not yet replayed. */
  readonly lag: { readonly samples: number; readonly p50Ms: number; readonly maxMs: number; readonly maxBytes: number; readonly caughtUpMs: number };
}

async function script(command: string): Promise<string | null> {
  try { return (await run('bash', [SCRIPT, command], { timeout: 300_000 })).stdout.trim(); } catch { return null; }
}

const withPort = (base: string, database: string) => {
  const where = new URL(base);
  const u = new URL(PG_ADMIN_URL);
  u.host = where.host;
  u.pathname = `/${database}`;
  return u.toString();
};

const one = async <R>(client: pg.Client, text: string): Promise<R> => (await client.query(text)).rows[0] as R;
const LSN = (f: string) => `CAST(${f} - '0/0' AS float8)`;

/** Samples the replica every 100 ms until `done` resolves, then until it has caught up with the primary. */
async function sampleLag(primary: pg.Client, replica: pg.Client, done: Promise<Row>) {
  const times: number[] = [];
  let maxBytes = 0;
  let finished = false;
  void done.finally(() => { finished = true; });
  const sample = async () => {
    const p = await one<{ lsn: number }>(primary, `SELECT ${LSN('pg_current_wal_lsn()')} AS lsn`);
    const r = await one<{ replayed: number; lag: number }>(replica, `SELECT ${LSN('pg_last_wal_replay_lsn()')} AS replayed,
      CASE WHEN pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
        ELSE EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000 END AS lag`);
    return { behind: Math.max(0, p.lsn - r.replayed), lag: Number(r.lag) };
  };
  while (!finished) {
    const s = await sample();
    times.push(s.lag);
    maxBytes = Math.max(maxBytes, s.behind);
    await new Promise((r) => setTimeout(r, 100));
  }
  const ended = performance.now();
  await primary.query('SELECT txid_current()');
  while ((await sample()).behind > 0 && performance.now() - ended < 60_000) await new Promise((r) => setTimeout(r, 10));
  const sorted = [...times].sort((a, b) => a - b);
  return { samples: times.length, p50Ms: sorted[Math.floor(sorted.length / 2)] ?? 0, maxMs: sorted.at(-1) ?? 0, maxBytes,
    caughtUpMs: performance.now() - ended };
}

async function caughtUp(primary: pg.Client, replica: pg.Client): Promise<void> {
  await primary.query('SELECT txid_current()');
  const { lsn } = await one<{ lsn: number }>(primary, `SELECT ${LSN('pg_current_wal_lsn()')} AS lsn`);
  for (const deadline = Date.now() + 300_000; Date.now() < deadline;) {
    if ((await one<{ r: number }>(replica, `SELECT ${LSN('pg_last_wal_replay_lsn()')} AS r`)).r >= lsn) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the replica did not catch up within 5 minutes');
}

export async function runReplica(certPem: string, today: string): Promise<ReplicaRun | null> {
  const existing = await script('status');
  const base = existing ?? (await script('create'));
  if (!base) {
    say('read replica: skipped (deploy/pg-replica.sh create needs root and PostgreSQL\'s cluster tools on this machine)');
    return null;
  }
  const url = await createPgDatabase(PG_DATABASE);
  const primary = new pg.Client({ connectionString: url });
  const replica = new pg.Client({ connectionString: withPort(base, PG_DATABASE) });
  try {
    const summary = await seed('postgres', url, certPem, today, { dataDir: join('.bench', 'replica'), assets: ROWS });
    await primary.connect();
    // The new database reaches the replica with the WAL: connect once it is there.
    for (let i = 0; ; i++) {
      try { await replica.connect(); break; } catch (e) { if (i > 300) throw e; await new Promise((r) => setTimeout(r, 200)); }
    }
    await caughtUp(primary, replica);
    const t = { url, dataDir: join('.bench', 'replica') };
    const onReplica = { ...service(t), env: { ...service(t).env, DATABASE_READ_URL: withPort(base, PG_DATABASE) } };
    const scope = summary.companies.filter((c) => c.inScope).map((c) => c.id);
    const { first } = summary.scopeIds;
    const w1Id = first + Math.floor(summary.assetsInScope / 2);
    const w1Path = `/3.0/assets/assets.id=${w1Id}`;
    const w1Check: Check = { kind: 'assets', totalRecords: 1, pageSize: PAGE_SIZE, page: 1, scope, id: w1Id };
    const overdue = `/3.0/assets/next_check<${today}`;
    const w2Check: Check = { kind: 'assets', totalRecords: summary.overdueInScope, pageSize: PAGE_SIZE, page: 1, before: today, scope };
    const pair = async (name: string, path: string, check: Check) => ({
      primary: await measureServer(announce(`${name}, reading the primary`, loadText(path)), service(t), getLoader(path, check)),
      replica: await measureServer(announce(`${name}, reading the replica`, loadText(path)), onReplica, getLoader(path, check)),
    });
    const w1 = await pair('W1', w1Path, w1Check);
    const w2 = await pair('W2', overdue, w2Check);

    const rows = Math.min(UPDATE_ROWS, summary.assetsInScope);
    const w6Path = `/3.0/assets/id+${first}/id-${first + rows - 1}`;
    const w6: Loader = {
      script: 'bench/sequential.ts',
      job: (port): SequentialJob => ({
        origin: `https://127.0.0.1:${port}`, method: 'POST', path: w6Path, bodies: W6_BODIES,
        warmups: UPDATE_WARMUPS, iterations: UPDATE_ITERATIONS, certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey,
        check: { kind: 'updated', records: rows },
      }),
    };
    const w6Run = measureServer(announce('W6 with the replica streaming', `${UPDATE_WARMUPS} warm-ups + ${UPDATE_ITERATIONS} POST ${w6Path}, `
      + 'the replica\'s lag sampled every 100 ms'), onReplica, w6);
    const lag = await sampleLag(primary, replica, w6Run);
    return { w1, w2, w6: await w6Run, lag };
  } finally {
    await replica.end().catch(() => {});
    await primary.end().catch(() => {});
    await dropPgDatabase(PG_DATABASE);
    if (!existing) await script('remove');
  }
}

/** Whether any answer of the part was wrong or failed. */
export const replicaFailed = (r: ReplicaRun): boolean => [r.w1.primary, r.w1.replica, r.w2.primary, r.w2.replica, r.w6]
  .some((x) => x.load.problems.mismatches + x.load.problems.non2xx + x.load.problems.errors > 0);

export function printReplica(r: ReplicaRun): void {
  const row = (name: string, x: Row) => [name, x.load.reqPerSec.toFixed(0), ms(x.load.latencyMs.p50), ms(x.load.latencyMs.p99),
    x.serverCpuPercent.toFixed(0), x.otherCpuPercent.toFixed(0)];
  printColumns('Read replica (PostgreSQL, one instance)', ['workload', 'req/s', 'p50 ms', 'p99 ms', 'server CPU %', 'other CPU %'], [
    row('W1 reading the primary', r.w1.primary), row('W1 reading the replica', r.w1.replica),
    row('W2 reading the primary', r.w2.primary), row('W2 reading the replica', r.w2.replica),
  ]);
  const w6 = r.w6.load;
  say(`\nW6 (${w6.ok} POSTs of ${UPDATE_ROWS} rows, p50 ${ms(w6.latencyMs.p50)} ms) with the replica streaming: its lag over `
    + `${r.lag.samples} samples p50 ${ms(r.lag.p50Ms)} ms, max ${ms(r.lag.maxMs)} ms; at most ${(r.lag.maxBytes / 1048576).toFixed(1)} MiB `
    + `of WAL not yet replayed; caught up ${ms(r.lag.caughtUpMs)} ms after the last POST`);
}
