// The store's types (a Database and where its GET requests read), apart from the code
// that opens one (database.ts) and the read replica's routing (replica.ts), which both use them.
import type { Kysely } from 'kysely';
import type { Changes } from './changes.ts';
import type { SqlDialect } from '../model/dialect.ts';
import type { StatementCache, Statement, Values } from './statements.ts';
import type { PoolStats } from '../metrics.ts';
import type { Tables } from './tables.ts';

export type Db = Kysely<Tables>;

export interface Database {
  readonly db: Db;
  readonly hooks: SqlDialect;
  /** Compiled statements by shape (bounded). */
  readonly statements: StatementCache;
  /** Runs a statement outside any transaction: it sees what is committed. */
  readonly read: <R>(statement: Statement, values: Values) => Promise<R[]>;
  /** Several instances may share this database (PostgreSQL); SQLite's file belongs to one process. */
  readonly shared: boolean;
  /** Notices of committed changes (PostgreSQL); null where the data version tells instead. */
  readonly changes: Changes | null;
  /** A number that changes with every commit by any connection (SQLite); null where notices tell instead. */
  readonly dataVersion: (() => number) | null;
  /** Runs `fn` in one transaction (SQLite: BEGIN IMMEDIATE, so writers queue instead of failing). */
  readonly transaction: <T>(fn: (trx: Db) => Promise<T>) => Promise<T>;
  /** Open connections and callers waiting for one (the metrics read it). */
  readonly pool: () => PoolStats;
  /**
   * The same store for background work (jobs, webhook delivery): on PostgreSQL it
   * holds at most a share of the pool's connections, so requests always find one;
   * SQLite's one writer is taken a slice at a time anyway. Closing it closes nothing.
   */
  readonly forBackground: () => Database;
  /** Where GET requests read when a read replica is configured (PostgreSQL); absent without one. */
  readonly reads?: ReadRouting;
  readonly close: () => Promise<void>;
}

export interface ReadRouting {
  /** The store a GET of this caller reads: a view that reads the replica, or one that reads the primary. */
  forRead(principal: string): Promise<Database>;
  /** After a caller's write committed: its position, so that its next reads wait for the replica to replay it. */
  wrote(principal: string): Promise<void>;
  close(): Promise<void>;
}
