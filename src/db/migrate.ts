// Forward-only migrations, applied at start-up and by `asset-tracker migrate`.
//
// Each migration runs in ONE transaction together with its bookkeeping row, so a
// process killed at any moment leaves a migration either wholly applied and
// recorded or not at all: DDL is transactional on both engines. (Kysely's own
// Migrator does not wrap migrations in a transaction on SQLite, whose adapter
// claims no transactional DDL; a kill in the middle of a migration then left
// tables behind that the next run tried to create again.)
//
// Several processes may migrate at once. Each step — read what is applied, apply
// the next pending migration, record it — runs under a lock held until its
// transaction ends: on SQLite the write lock (BEGIN IMMEDIATE, so writers queue
// on busy_timeout instead of one failing at commit); on PostgreSQL a transaction
// advisory lock, released by the commit, the rollback or the death of the
// connection. A second process therefore reads the list again after the first
// has committed, and never runs a migration twice.
//
// Bookkeeping stays where the stores made by Kysely's Migrator (earlier versions)
// keep it: table `kysely_migration` (name, timestamp), the same DDL, the same ISO
// timestamps, so those stores go on from where they are, nothing applied twice,
// and this runner's stores read the same to Kysely's Migrator. Its
// `kysely_migration_lock` table is no longer used and is left alone. The
// PostgreSQL advisory lock has the key of Kysely's migrator lock, so an instance
// of an earlier version starting during a rolling upgrade takes turns with this
// one. SQLite's DDL is transactional; a migration must only not run statements
// that cannot run in a transaction (PRAGMA foreign_keys, VACUUM; on PostgreSQL
// CREATE INDEX CONCURRENTLY and the like).
import { type Kysely, sql } from 'kysely';
import { forEngine } from './dialects.ts';
import { errorCode } from './dialect.ts';
import { immediateTransaction } from './sqlite.ts';
import * as initial from './migrations/0001_initial.ts';
import * as sessions from './migrations/0002_sessions.ts';
import * as reminderRuns from './migrations/0003_reminder_runs.ts';
import * as companyClosure from './migrations/0004_company_closure.ts';
import * as clientNotices from './migrations/0005_client_notices.ts';
import * as rateLimits from './migrations/0006_rate_limits.ts';
import * as throttleKeys from './migrations/0007_throttle_keys.ts';
import * as webhooks from './migrations/0008_webhooks.ts';
import * as changes from './migrations/0009_changes.ts';
import * as versions from './migrations/0010_versions.ts';
import * as idempotencyKeys from './migrations/0011_idempotency_keys.ts';
import * as assetTallies from './migrations/0012_asset_tallies.ts';
import * as assetWalkIndex from './migrations/0013_asset_walk_index.ts';
import * as reminderWalk from './migrations/0014_reminder_walk.ts';
import * as schemaParts from './migrations/0015_schema_parts.ts';
import * as assetchecks from './migrations/0016_assetchecks.ts';
import * as portalSessions from './migrations/0017_portal_sessions.ts';
import * as instances from './migrations/0018_instances.ts';
import * as readPositions from './migrations/0019_read_positions.ts';
import * as failedAssets from './migrations/0020_failed_assets.ts';
import * as portalFeeds from './migrations/0021_portal_feeds.ts';
import * as mail from './migrations/0022_mail.ts';

export interface Migration {
  readonly name: string;
  /** Gets the step's transaction: everything it runs commits, or rolls back, with its bookkeeping row. */
  up(db: Kysely<unknown>): Promise<void>;
}

/** In the order they apply; names sort in that order too (as Kysely's Migrator required). */
export const MIGRATIONS: readonly Migration[] = [
  { name: '0001_initial', up: initial.up },
  { name: '0002_sessions', up: sessions.up },
  { name: '0003_reminder_runs', up: reminderRuns.up },
  { name: '0004_company_closure', up: companyClosure.up },
  { name: '0005_client_notices', up: clientNotices.up },
  { name: '0006_rate_limits', up: rateLimits.up },
  { name: '0007_throttle_keys', up: throttleKeys.up },
  { name: '0008_webhooks', up: webhooks.up },
  { name: '0009_changes', up: changes.up },
  { name: '0010_versions', up: versions.up },
  { name: '0011_idempotency_keys', up: idempotencyKeys.up },
  { name: '0012_asset_tallies', up: assetTallies.up },
  { name: '0013_asset_walk_index', up: assetWalkIndex.up },
  { name: '0014_reminder_walk', up: reminderWalk.up },
  { name: '0015_schema_parts', up: schemaParts.up },
  { name: '0016_assetchecks', up: assetchecks.up },
  { name: '0017_portal_sessions', up: portalSessions.up },
  { name: '0018_instances', up: instances.up },
  { name: '0019_read_positions', up: readPositions.up },
  { name: '0020_failed_assets', up: failedAssets.up },
  { name: '0021_portal_feeds', up: portalFeeds.up },
  { name: '0022_mail', up: mail.up },
];

export const MIGRATION_TABLE = 'kysely_migration';
/** Kysely's migration lock key (its PostgresAdapter), shared for the rolling-upgrade case above. */
const PG_LOCK_KEY = sql.raw('3853314791062309107');
/** Attempts of one step that failed for a transient reason (SQLite still busy after busy_timeout). */
const ATTEMPTS = 5;

/** Applies every pending migration; returns the names this call applied (others may have applied the rest). */
export async function migrate<T>(db: Kysely<T>): Promise<string[]> {
  // Migrations see the schema untyped: they describe it rather than use it.
  return runMigrations(db as unknown as Kysely<unknown>, MIGRATIONS);
}

/** `migrate` over a given list (tests hand it migrations of their own). */
export async function runMigrations(db: Kysely<unknown>, migrations: readonly Migration[]): Promise<string[]> {
  const engine = forEngine(db, { sqlite, postgres });
  // Up to date (every start but the first): no lock, no write.
  if (pending(await appliedNames(db, engine), migrations).length === 0) return [];
  const applied: string[] = [];
  for (let more = true; more;) {
    // One step: the next pending migration and its row, in one transaction under the lock.
    const step = await retrying(engine, () => engine.locked(db, async (trx) => {
      // Exactly the table Kysely's Migrator creates, so both make the same schema.
      await trx.schema.createTable(MIGRATION_TABLE).ifNotExists()
        .addColumn('name', 'varchar(255)', (c) => c.notNull().primaryKey())
        .addColumn('timestamp', 'varchar(255)', (c) => c.notNull()).execute();
      const [next, ...rest] = pending(await appliedNames(trx, engine), migrations);
      if (!next) return null;
      await next.up(trx);
      await sql`INSERT INTO ${sql.table(MIGRATION_TABLE)} (name, timestamp) VALUES (${next.name}, ${new Date().toISOString()})`.execute(trx);
      return { name: next.name, more: rest.length > 0 };
    }));
    if (!step) break;
    applied.push(step.name);
    more = step.more;
  }
  return applied;
}

/**
 * The migrations of this version the database has not applied (readiness). Ones it does
 * not know are no concern here: a newer version may have migrated during a rolling upgrade.
 */
export async function missingMigrations<T>(db: Kysely<T>): Promise<string[]> {
  const untyped = db as unknown as Kysely<unknown>;
  const applied = new Set(await appliedNames(untyped, forEngine(untyped, { sqlite, postgres })));
  return MIGRATIONS.filter((m) => !applied.has(m.name)).map((m) => m.name);
}

interface Engine {
  tableExists(db: Kysely<unknown>): Promise<boolean>;
  /** Runs `fn` in one transaction that holds the migration lock from its start. */
  locked<R>(db: Kysely<unknown>, fn: (trx: Kysely<unknown>) => Promise<R>): Promise<R>;
  isTransient(error: unknown): boolean;
}

const sqlite: Engine = {
  async tableExists(db) {
    const { rows } = await sql`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ${MIGRATION_TABLE}`.execute(db);
    return rows.length > 0;
  },
  // The write lock, for the whole step, as the service's own transactions take it.
  locked: immediateTransaction,
  isTransient: (e) => /^SQLITE_(BUSY|LOCKED)/.test(errorCode(e) ?? ''),
};

const postgres: Engine = {
  async tableExists(db) {
    const { rows } = await sql<{ present: boolean }>`SELECT to_regclass(${MIGRATION_TABLE}) IS NOT NULL AS present`.execute(db);
    return rows[0]?.present === true;
  },
  // READ COMMITTED whatever the server's default: each statement after the lock wait
  // must see what the previous holder committed (a snapshot taken before it would not).
  locked: (db, fn) => db.transaction().setIsolationLevel('read committed').execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${PG_LOCK_KEY})`.execute(trx);
    return fn(trx);
  }),
  // serialization_failure, deadlock_detected, lock_not_available (a server-wide lock_timeout).
  isTransient: (e) => ['40001', '40P01', '55P03'].includes(errorCode(e) ?? ''),
};

async function appliedNames(db: Kysely<unknown>, engine: Engine): Promise<string[]> {
  if (!(await engine.tableExists(db))) return [];
  const { rows } = await sql<{ name: string }>`SELECT name FROM ${sql.table(MIGRATION_TABLE)} ORDER BY name`.execute(db);
  return rows.map((r) => r.name);
}

/** The migrations still to apply, in order; refuses a store this code base did not migrate the way it would. */
function pending(applied: readonly string[], migrations: readonly Migration[]): Migration[] {
  const known = new Set(migrations.map((m) => m.name));
  const unknown = applied.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(`the database has migrations this version does not know (${unknown.join(', ')}): it was migrated by a newer version`);
  }
  const done = new Set(applied);
  const firstPending = migrations.findIndex((m) => !done.has(m.name));
  if (firstPending < 0) return [];
  const rest = migrations.slice(firstPending);
  const outOfOrder = rest.filter((m) => done.has(m.name));
  if (outOfOrder.length > 0) {
    throw new Error(`migration ${rest[0]!.name} is not applied but later ones are (${outOfOrder.map((m) => m.name).join(', ')})`);
  }
  return rest;
}

async function retrying<R>(engine: Engine, fn: () => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= ATTEMPTS || !engine.isTransient(error)) throw error;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}
