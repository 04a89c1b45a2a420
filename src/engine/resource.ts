// A resource is its definition plus small hooks for the behaviour that is its
// own (queue release, check-date advance); the engine does everything else.
import type { Db } from '../db/database.ts';
import type { Sql } from '../model/dialect.ts';
import type { Values } from '../db/statements.ts';
import type { ResourceDef, Row } from '../model/types.ts';
import type { AuditEntry } from './audit.ts';
import type { Ctx, Shape } from './context.ts';

/** One write transaction in progress. */
export interface WriteTx {
  readonly ctx: Ctx;
  readonly db: Db;
  /** The request's time, as stored datetimes and dates. */
  readonly now: string;
  readonly today: string;
  readonly shape: Shape;
  /** The request's values (PARAMS) for statements. */
  readonly values: Values;
  /** Runs the statement of `key` (built once by `build`) in this transaction, with the request's values and `extra`. */
  run<R = Row>(key: string, build: () => Sql, extra?: Values): Promise<{ rows: R[]; changes: number }>;
  /** A record of `def` in the caller's scope, or null. */
  find(def: ResourceDef, id: number): Promise<Row | null>;
  /** Creates a record of another resource in this transaction (checked, audited); returns its id. */
  create(resource: string, values: Row): Promise<number>;
  audit(entry: AuditEntry): void;
  /** Inserts the buffered entries now: entries the database writes itself must come after them. */
  flushAudit(): Promise<void>;
  /**
   * Audit entries recorded under the companies keyed here — those stored and this
   * transaction's — pass to the mapped company (a deleted company's log stays readable).
   */
  passAudit(heirs: ReadonlyMap<number, number>): void;
  /** Runs once the transaction has committed (never if it rolls back). */
  afterCommit(fn: () => Promise<void>): void;
}

export interface Hooks {
  /** Checks a body's values that need no stored record (runs before any record is matched). */
  validate?(ctx: Ctx, values: Row, mode: 'create' | 'update'): void;
  /** May fill in a new record before its references are checked. */
  beforeCreate?(tx: WriteTx, record: Row): Promise<void> | void;
  /** May refuse a checked new record for the state of others (409). */
  beforeInsert?(tx: WriteTx, record: Row): Promise<void> | void;
  /**
   * May adjust `changes` (or refuse) for one matched record. A resource with this
   * hook (or afterUpdate) is updated record by record; others in one statement.
   */
  beforeUpdate?(tx: WriteTx, old: Row, changes: Row): Promise<void> | void;
  /**
   * Columns a set-based update derives per record from its stored values, as SQL
   * over alias `t` (parameters in `values`), for the given changes.
   */
  derive?(tx: WriteTx, changes: Row): Derived | null;
  /** Runs after a record changed; `next` is the stored record now. */
  afterUpdate?(tx: WriteTx, old: Row, next: Row): Promise<void> | void;
  /** May refuse deleting the matched records. */
  beforeDelete?(tx: WriteTx, rows: readonly Row[]): Promise<void> | void;
}

export interface Derived {
  readonly field: string;
  /** Part of the statement's key: what in `changes` shaped the SQL. */
  readonly key: string;
  readonly expr: Sql;
  readonly values: Values;
}

export interface Resource {
  readonly def: ResourceDef;
  readonly hooks?: Hooks;
}
