// What every outbox shares (webhook deliveries, e-mail): a row waits — `pending`,
// or `retrying` at `next_attempt` — until an attempt delivers it or it gives up
// (`failed`). An instance makes an attempt only while it holds the lease on what the
// attempt is about (a webhook, whose deliveries go in order; or the outbox row
// itself), taken by one conditional UPDATE: several instances never make the same
// attempt at once. A lease outlives the attempt it covers; one held by a process
// that died expires, and the row is tried again (at least once). What an attempt
// leaves — delivered, retrying when, or failed — is worked out here too, from the
// channel's retry schedule.
import { randomBytes } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import { type Clock, formatDatetime } from '../model/dates.ts';
import type { Db } from './database.ts';

/** The states of a row that waits for an attempt. */
export const WAITING: readonly string[] = ['pending', 'retrying'];
export type OutboxStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

export interface RetrySchedule {
  /** Milliseconds until the next attempt after `attempt` failed ones (attempt ≥ 1); `retryAfterS` is what the receiver asked. */
  delayMs(attempt: number, retryAfterS: number | null): number;
  /** No attempt is made this long after the row was written. */
  readonly giveUpMs: number;
}

/** First retry after `firstMs`, each wait twice the last, at most `maxMs`, until `giveUpMs`. */
export function doublingSchedule(firstMs: number, maxMs: number, giveUpMs: number): RetrySchedule {
  return { giveUpMs, delayMs: (attempt) => Math.min(maxMs, firstMs * 2 ** Math.min(30, attempt - 1)) };
}

/** Tables whose rows (or what they stand for) are leased: they have `id`, `lease_owner` and `lease_until`. */
export type LeasedTable = 'webhooks' | 'mail_outbox';

/** One instance's leases on one table's rows. */
export class Leases {
  /** Who holds a lease: one per process and table (random, so a restarted process is someone else). */
  readonly owner = randomBytes(8).toString('hex');

  constructor(private readonly table: LeasedTable, private readonly leaseMs: number, private readonly clock: Clock) {}

  /**
   * Takes (or renews) the lease on row `id` when it is free, expired or already ours and
   * `also` holds; the row's `returning` columns, or null when another instance holds it.
   */
  async take<R>(db: Db, id: number, returning: readonly string[], also: RawBuilder<unknown> = sql`1 = 1`): Promise<R | null> {
    const now = this.clock.now();
    const { rows } = await sql<R>`UPDATE ${sql.table(this.table)}
      SET lease_owner = ${this.owner}, lease_until = ${formatDatetime(new Date(now.getTime() + this.leaseMs))}
      WHERE id = ${id} AND (lease_until IS NULL OR lease_until < ${formatDatetime(now)} OR lease_owner = ${this.owner}) AND ${also}
      RETURNING ${sql.join(returning.map((c) => sql.ref(c)))}`.execute(db);
    return rows[0] ?? null;
  }

  /** Gives the lease on `id` back, if it is still ours. */
  async release(db: Db, id: number): Promise<void> {
    await sql`UPDATE ${sql.table(this.table)} SET lease_owner = NULL, lease_until = NULL
      WHERE id = ${id} AND lease_owner = ${this.owner}`.execute(db);
  }
}

export interface Attempted {
  /** Attempts made, this one included. */
  readonly attempt: number;
  readonly ok: boolean;
  /** Failed in a way no retry mends (a 410, a refused address). */
  readonly final: boolean;
  readonly retryAfterS: number | null;
  /** When the attempt ended, and when the row was written. */
  readonly at: Date;
  readonly since: Date;
}

/** Where a row stands after an attempt: its status and, when it is retried, when. */
export function settle(a: Attempted, schedule: RetrySchedule): { status: OutboxStatus; nextAttempt: string | null } {
  if (a.ok) return { status: 'delivered', nextAttempt: null };
  const next = a.final ? null : a.at.getTime() + schedule.delayMs(a.attempt, a.retryAfterS);
  if (next === null || next > a.since.getTime() + schedule.giveUpMs) return { status: 'failed', nextAttempt: null };
  // Whole seconds, rounded up: never sooner than the schedule or the receiver asked.
  return { status: 'retrying', nextAttempt: formatDatetime(new Date(Math.ceil(next / 1000) * 1000)) };
}
