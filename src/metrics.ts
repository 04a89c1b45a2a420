// The service's Prometheus metrics, in one registry any module adds to (served by
// http/metrics-listener.ts on METRICS_PORT). Events are counted where they happen;
// values that already live elsewhere — pool sizes, connection-limit tallies, a
// backlog in a table — are read only when scraped (`sampledGauge`), so their owners
// keep no timer and pay nothing between scrapes. Labels are bounded: endpoint
// names, verbs, statuses, outcomes — never a path, an id or an address.
import type { EventEmitter } from 'node:events';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
const registers = [registry];

type Labels<L extends string> = Partial<Record<L, string | number>>;
type Sample<L extends string> = { readonly labels: Labels<L>; readonly value: number };

/**
 * A gauge whose value is read at scrape time: `read` gives one number, or one
 * sample per label set (it may query the database: it runs once per scrape).
 */
export function sampledGauge<L extends string = never>(o: { name: string; help: string; labelNames?: readonly L[] },
  read: () => number | readonly Sample<L>[] | Promise<number | readonly Sample<L>[]>): Gauge<L> {
  return new Gauge<L>({
    name: o.name, help: o.help, labelNames: o.labelNames ?? [], registers,
    async collect() {
      const value = await read();
      this.reset();
      if (typeof value === 'number') this.set(value);
      else for (const s of value) this.set(s.labels, s.value);
    },
  });
}

// Requests (http/observe.ts).

export const httpRequests = new Counter({
  name: 'asset_tracker_http_requests_total', help: 'Requests answered, by endpoint name, verb and status',
  labelNames: ['endpoint', 'verb', 'status'] as const, registers,
});
export const httpDuration = new Histogram({
  name: 'asset_tracker_http_request_duration_seconds', help: 'Time from request to the end of its response',
  labelNames: ['endpoint', 'verb', 'status'] as const, registers,
  buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});
export const httpInFlight = new Gauge({
  name: 'asset_tracker_http_requests_in_flight', help: 'Requests received whose response has not ended yet', registers,
});
export const rateLimitRefusals = new Counter({
  name: 'asset_tracker_rate_limit_refusals_total', help: 'Requests refused with 429 by the per-certificate rate limit', registers,
});

// The database.

export const statementCacheLookups = new Counter({
  name: 'asset_tracker_statement_cache_lookups_total', help: 'Compiled statement lookups by shape (hit: reused; miss: built and compiled)',
  labelNames: ['result'] as const, registers,
});
export const dbPoolWait = new Histogram({
  name: 'asset_tracker_db_pool_wait_seconds', help: 'Time a caller waited for a database connection (SQLite: for the one writer connection)',
  labelNames: ['engine'] as const, registers, buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
});

/** Connections of one database handle: open, idle, the cap, and callers waiting for one. */
export interface PoolStats { readonly engine: string; readonly size: number; readonly idle: number; readonly max: number; readonly waiting: number }

const pools = new Set<() => PoolStats>();
/** Reports a database's connections until the returned function is called. */
export function watchPool(stats: () => PoolStats): () => void {
  pools.add(stats);
  return () => { pools.delete(stats); };
}
/** One sample per engine, summed over its pools (a server has one). */
const poolGauge = (name: string, help: string, pick: (s: PoolStats) => number) => sampledGauge({ name, help, labelNames: ['engine'] }, () => {
  const byEngine = new Map<string, number>();
  for (const read of pools) { const s = read(); byEngine.set(s.engine, (byEngine.get(s.engine) ?? 0) + pick(s)); }
  return [...byEngine].map(([engine, value]) => ({ labels: { engine }, value }));
});
poolGauge('asset_tracker_db_pool_size', 'Open database connections', (s) => s.size);
poolGauge('asset_tracker_db_pool_idle', 'Open database connections not in use', (s) => s.idle);
poolGauge('asset_tracker_db_pool_max', 'Most connections the pool opens (DB_POOL_SIZE; SQLite: its one writer)', (s) => s.max);
poolGauge('asset_tracker_db_pool_waiting', 'Callers waiting for a database connection', (s) => s.waiting);

// The read replica (db/replica.ts).

export const dbReads = new Counter({
  name: 'asset_tracker_db_reads_total', help: 'Statements run for GET requests, by the pool that ran them (primary, replica)',
  labelNames: ['pool'] as const, registers,
});
export const replicaLag = new Gauge({
  name: 'asset_tracker_replica_lag_seconds', help: 'How far the read replica\'s replay is behind (0 when it has replayed all it received), at its last check', registers,
});
export const replicaUsable = new Gauge({
  name: 'asset_tracker_replica_usable', help: '1 while GET requests may read the replica (reachable, lag within READ_MAX_LAG), else 0', registers,
});

// Connection limits (http/connections.ts keeps the tallies; they are read when scraped).

/** What the connection limits have closed so far on a listener, by reason (http/connections.ts counts them). */
type ConnectionCounts = Readonly<Record<'handshakeTimeouts' | 'overTotal' | 'overAddress', number>>;

const listeners = new Map<ConnectionCounts, string>();
/** Listeners closed before: their tallies stay in the totals, so the counter never goes back. */
const retired = new Map<string, number>();
const REASONS = { handshakeTimeouts: 'handshake_timeout', overTotal: 'over_total', overAddress: 'over_address' } as const;

/** Counts a listener's connection-limit closures until the server closes. */
export function watchConnections(listener: string, counts: ConnectionCounts, server: EventEmitter): void {
  listeners.set(counts, listener);
  server.once('close', () => {
    listeners.delete(counts);
    for (const [k, reason] of Object.entries(REASONS)) {
      const key = `${listener}|${reason}`;
      retired.set(key, (retired.get(key) ?? 0) + counts[k as keyof ConnectionCounts]);
    }
  });
}
new Counter({
  name: 'asset_tracker_connections_closed_total', help: 'Connections closed by the connection limits (TLS handshake timeout, over MAX_CONNECTIONS or MAX_CONNECTIONS_PER_ADDRESS)',
  labelNames: ['listener', 'reason'] as const, registers,
  collect() {
    const totals = new Map(retired);
    for (const [counts, listener] of listeners) {
      for (const [k, reason] of Object.entries(REASONS)) {
        const key = `${listener}|${reason}`;
        totals.set(key, (totals.get(key) ?? 0) + counts[k as keyof ConnectionCounts]);
      }
    }
    this.reset();
    for (const [key, value] of totals) {
      const [listener, reason] = key.split('|');
      this.inc({ listener, reason }, value);
    }
  },
});

// The reminder run (jobs/reminders.ts).

export const reminderRuns = new Counter({
  name: 'asset_tracker_reminder_runs_total', help: 'Reminder runs finished (partial: the run failed for some companies)',
  labelNames: ['outcome'] as const, registers,
});
export const reminderItems = new Counter({
  name: 'asset_tracker_reminder_items_total', help: 'What reminder runs did: reminders created, reminders delivered, messages sent',
  labelNames: ['kind'] as const, registers,
});
export const reminderRunDuration = new Histogram({
  name: 'asset_tracker_reminder_run_duration_seconds', help: 'Duration of reminder runs', registers,
  buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
});
export const reminderLastRun = new Gauge({
  name: 'asset_tracker_reminder_last_run_timestamp_seconds', help: 'When the last reminder run finished (Unix time)', registers,
});

/** Records one finished reminder run. */
export const jobRuns = new Counter({
  name: 'asset_tracker_job_runs_total', help: 'Runs of each background job (jobs/table.ts), by outcome (ok, failed)',
  labelNames: ['job', 'outcome'] as const, registers,
});
export const jobDuration = new Histogram({
  name: 'asset_tracker_job_duration_seconds', help: 'How long each background job run took', labelNames: ['job'] as const, registers,
  buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
});
export const jobLastRun = new Gauge({
  name: 'asset_tracker_job_last_run_timestamp_seconds', help: 'When each background job last ended (Unix time)', labelNames: ['job'] as const, registers,
});

export function observeJobRun(job: string, outcome: 'ok' | 'failed', ms: number): void {
  jobRuns.inc({ job, outcome });
  jobDuration.observe({ job }, ms / 1000);
  jobLastRun.set({ job }, Date.now() / 1000);
}

export function observeReminderRun(run: { created: number; delivered: number; messages: number; failed: readonly number[] }, startedMs: number): void {
  reminderRuns.inc({ outcome: run.failed.length > 0 ? 'partial' : 'complete' });
  reminderItems.inc({ kind: 'created' }, run.created);
  reminderItems.inc({ kind: 'delivered' }, run.delivered);
  reminderItems.inc({ kind: 'messages' }, run.messages);
  reminderRunDuration.observe((Date.now() - startedMs) / 1000);
  reminderLastRun.set(Date.now() / 1000);
}
