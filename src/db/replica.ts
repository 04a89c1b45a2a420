// Reads from a streaming replica (DATABASE_READ_URL), never older than the
// caller's own writes. After each write a caller (certificate, plus session user)
// makes, the primary's WAL position is remembered for that caller where every
// instance sees it (the primary's read_positions table, or Redis); a GET then reads
// the replica only if the replica has replayed at least that far, else the primary.
// The replica's health and lag are checked once a second in the background; its
// replay position is asked again, at most every few ms, only for a caller whose last
// write it had not yet replayed. A replica that cannot be reached, or lags more than
// READ_MAX_LAG, sends every read to the primary until it recovers.
import type { EventEmitter } from 'node:events';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { dbReads, replicaLag, replicaUsable } from '../metrics.ts';
import type { Database, ReadRouting } from './database-types.ts';
import { errorCode } from './dialect.ts';
import { openPostgres, readOn } from './postgres.ts';
import { bind } from './statements.ts';
import type { Tables } from './tables.ts';

/** The callers' last write positions, shared by all instances. */
export interface ReadPositions {
  /** Remembers the primary's WAL position now (after a commit) as the caller's, unless a later one is kept. */
  record(principal: string): Promise<void>;
  /** The caller's last write position (bytes into the WAL); 0 when none is kept. */
  get(principal: string): Promise<number>;
  close(): Promise<void>;
}

/** Makes a store of positions given a way to read the primary's WAL position (used by the Redis one). */
export type { ReadRouting } from './database-types.ts';

export type ReadPositionsFactory = (primaryPosition: () => Promise<number>) => ReadPositions;

export interface ReplicaOptions {
  readonly url: string;
  readonly maxLagMs: number;
  readonly poolSize: number;
  /** Where positions are kept (default: the primary's read_positions table). */
  readonly positions?: ReadPositionsFactory;
  /** How often health and lag are checked (default 1 s). */
  readonly checkEveryMs?: number;
}

const CONNECT_TIMEOUT_MS = 1000;
/** A replay position this recent is trusted for a caller with a write pending. */
const REPLAY_FRESH_MS = 5;
/** Positions older than this are forgotten: by then any replica within READ_MAX_LAG has replayed them. */
const FORGET_MS = 600_000;

// A position is bytes into the WAL: 2^53 bytes (8 PiB) of WAL before a number loses precision.
// A standby whose WAL receiver is not running (cut off from the primary, or past what the primary
// still keeps) cannot know what it misses: it counts as lagging since its last replayed commit.
const STATE = `SELECT pg_is_in_recovery() AS recovering, CAST(pg_last_wal_replay_lsn() - '0/0' AS float8) AS replayed,
  CASE WHEN EXISTS (SELECT 1 FROM pg_stat_wal_receiver) AND pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
    ELSE GREATEST(0, EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000) END AS lag_ms`;
const REPLAYED = `SELECT pg_is_in_recovery() AS recovering, CAST(pg_last_wal_replay_lsn() - '0/0' AS float8) AS replayed`;
const PRIMARY_POSITION = `SELECT CAST(pg_current_wal_insert_lsn() - '0/0' AS float8) AS lsn`;
const RECORD = `INSERT INTO read_positions (principal, lsn) VALUES ($1, CAST(pg_current_wal_insert_lsn() - '0/0' AS bigint))
  ON CONFLICT (principal) DO UPDATE SET lsn = GREATEST(read_positions.lsn, EXCLUDED.lsn), updated = now()`;
const GET = 'SELECT lsn FROM read_positions WHERE principal = $1';
const FORGET = `DELETE FROM read_positions WHERE updated < now() - make_interval(secs => ${FORGET_MS / 1000})`;

/** Positions in the primary's unlogged read_positions table: one statement to record, one indexed read to look up. */
export function tablePositions(primary: PostgresPool): ReadPositions {
  let recorded = 0;
  return {
    async record(principal) {
      if (++recorded % 1000 === 0) await readOn(primary, FORGET, []);
      await readOn(primary, RECORD, [principal]);
    },
    async get(principal) {
      const [row] = (await readOn(primary, GET, [principal])) as { lsn: number }[];
      return row ? row.lsn : 0;
    },
    close: async () => {},
  };
}

/** Failures (a network error, or SQLSTATE) that say the replica (or the way to it) is gone, or that it cancelled the read for its replay. */
const replicaTrouble = (e: unknown): boolean => {
  const code = errorCode(e);
  return code === undefined || code.length !== 5 || code.startsWith('08') || code.startsWith('57P') || code === '40001' || code === '53300';
};

export function openReadRouting(primary: Database, primaryPool: PostgresPool, o: ReplicaOptions): ReadRouting {
  const replica = openPostgres(o.url, o.poolSize, CONNECT_TIMEOUT_MS);
  const positions = (o.positions ?? (() => tablePositions(primaryPool)))(async () => {
    const [row] = (await readOn(primaryPool, PRIMARY_POSITION, [])) as { lsn: number }[];
    return row!.lsn;
  });
  let usable = false;
  let replayed = 0;
  let replayedAt = 0;
  let untrackedUntil = 0;
  let asking: Promise<void> | null = null;

  const noteReplayed = (row: { recovering: boolean; replayed: number | null }) => {
    // A server that is not (or no longer) a standby has all it holds: nothing to wait for.
    replayed = row.recovering ? (row.replayed ?? 0) : Number.POSITIVE_INFINITY;
    replayedAt = performance.now();
  };
  const setUsable = (value: boolean) => {
    usable = value;
    replicaUsable.set(value ? 1 : 0);
  };
  async function check(): Promise<void> {
    try {
      const [row] = (await readOn(replica.pool, STATE, [])) as { recovering: boolean; replayed: number | null; lag_ms: number | string }[];
      const lag = row!.recovering ? Number(row!.lag_ms) : 0;
      noteReplayed(row!);
      replicaLag.set(lag / 1000);
      setUsable(lag <= o.maxLagMs);
    } catch {
      setUsable(false);
    }
  }
  const first = check();
  const timer = setInterval(() => void check(), o.checkEveryMs ?? 1000);
  timer.unref();

  const askReplayed = () => (asking ??= readOn(replica.pool, REPLAYED, [])
    .then((rows) => noteReplayed(rows[0] as { recovering: boolean; replayed: number | null }), () => setUsable(false))
    .finally(() => { asking = null; }));

  const guarded = new WeakSet<PostgresPoolClient>();
  // Connections for the replica's view: the replica's, or the primary's when the replica cannot be reached.
  const fallback: PostgresPool = {
    async connect(): Promise<PostgresPoolClient> {
      try {
        const client = await replica.pool.connect();
        // A replica that stops ends its connections; one lent out between two statements must not crash the process.
        if (!guarded.has(client)) { guarded.add(client); (client as unknown as EventEmitter).on('error', () => {}); }
        dbReads.inc({ pool: 'replica' });
        return client;
      } catch {
        setUsable(false);
        dbReads.inc({ pool: 'primary' });
        return primaryPool.connect();
      }
    },
    end: () => replica.pool.end(),
  };
  const replicaDb = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: fallback }) });
  const onReplica: Database = {
    ...primary,
    db: replicaDb,
    async read(s, values) {
      const params = bind(s, values);
      try {
        return (await readOn(fallback, s.text, params)) as never[];
      } catch (e) {
        // A read is safe to run again: the replica went away, or cancelled it to replay.
        if (!replicaTrouble(e)) throw e;
        dbReads.inc({ pool: 'primary' });
        return (await readOn(primaryPool, s.text, params)) as never[];
      }
    },
  };
  const onPrimary: Database = {
    ...primary,
    read(s, values) {
      dbReads.inc({ pool: 'primary' });
      return primary.read(s, values);
    },
  };

  return {
    async forRead(principal) {
      if (!usable || performance.now() < untrackedUntil) return onPrimary;
      let position: number;
      try {
        position = await positions.get(principal);
      } catch {
        return onPrimary;
      }
      if (position <= replayed) return onReplica;
      if (performance.now() - replayedAt > REPLAY_FRESH_MS) await askReplayed();
      return usable && position <= replayed ? onReplica : onPrimary;
    },
    async wrote(principal) {
      try {
        await positions.record(principal);
      } catch {
        // Unknown how far this caller wrote: every read goes to the primary until any replica within the lag allowed has replayed it.
        untrackedUntil = performance.now() + o.maxLagMs + 2 * (o.checkEveryMs ?? 1000);
      }
    },
    async close() {
      clearInterval(timer);
      await first;
      await asking;
      await positions.close();
      await replicaDb.destroy();
    },
  };
}
