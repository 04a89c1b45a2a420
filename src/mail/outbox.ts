// Delivering the e-mail outbox: the `mail` job of every `serve` process (jobs/table.ts)
// and `asset-tracker jobs run mail`. Each pass takes the mail that is due, one row at a
// time under a lease on the row (db/outbox.ts, the mechanism the webhooks use), so
// several instances never send the same row at once; the lease is renewed while the
// attempt runs and lapses if the process dies, when another instance tries the row
// again. A row is marked delivered right after the server accepts it: a process that
// dies between the two is the one way a mail goes out twice. Failures are retried
// after 1 minute, then 2, 4 … at most an hour apart, for 24 hours; a server that
// cannot be reached ends the pass (the rest waits for the next).
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { doublingSchedule, Leases, settle, WAITING } from '../db/outbox.ts';
import { type Clock, formatDatetime, systemClock } from '../model/dates.ts';
import { compose, type OutboxRow } from './compose.ts';
import { mailAttempts, watchMailBacklog } from './metrics.ts';
import type { MailSettings } from './settings.ts';
import { type Mailer, sendMessage, smtpTransport } from './transport.ts';

export const MAIL_SCHEDULE = doublingSchedule(60_000, 3_600_000, 24 * 3_600_000);
/** Rows one pass takes at most. */
const PASS_ROWS = 50;

export interface MailLog { warn(o: object, msg: string): void; info(o: object, msg: string): void }

const isoOf = (datetime: string) => new Date(`${datetime.replace(' ', 'T')}Z`);

export class MailSender {
  private readonly clock: Clock;
  private readonly leases: Leases;
  private mailer: Mailer | null = null;

  constructor(private readonly database: Database, private readonly settings: MailSettings, private readonly o: { clock?: Clock; log?: MailLog } = {}) {
    this.clock = o.clock ?? systemClock;
    this.leases = new Leases('mail_outbox', settings.timeoutMs + 5000, this.clock);
    watchMailBacklog(() => this.backlog());
  }

  /** One pass over the due mail (or only the rows `only` names); `stopping` ends it between two attempts. */
  async pass(stopping: () => boolean = () => false, only?: readonly number[]): Promise<{ attempted: number; delivered: number }> {
    const now = formatDatetime(this.clock.now());
    let q = this.database.db.selectFrom('mail_outbox').select('id').where('status', 'in', WAITING).where('next_attempt', '<=', now);
    if (only) q = q.where('id', 'in', only.length > 0 ? [...only] : [0]);
    const due = await q.orderBy('id').limit(PASS_ROWS).execute();
    let attempted = 0;
    let delivered = 0;
    for (const { id } of due) {
      if (stopping()) break;
      const row = await this.leases.take<OutboxRow>(this.database.db, Number(id),
        ['id', 'company_id', 'user_id', 'kind', 'data', 'attempt', 'created'],
        sql`status IN (${sql.join(WAITING)}) AND next_attempt <= ${formatDatetime(this.clock.now())}`);
      if (!row) continue;
      attempted++;
      const outcome = await this.attempt(row);
      if (outcome === 'delivered') delivered++;
      if (outcome === 'unreachable') break;
    }
    return { attempted, delivered };
  }

  async backlog(): Promise<number> {
    const r = await this.database.db.selectFrom('mail_outbox').select((e) => e.fn.countAll<number>().as('n')).where('status', 'in', WAITING)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  close(): void {
    this.mailer?.close();
    this.mailer = null;
  }

  private async attempt(row: OutboxRow): Promise<'delivered' | 'failed' | 'unreachable'> {
    const id = Number(row.id);
    // The lease is renewed while the attempt runs (however slowly the server answers), never taken back once settled.
    const mine = sql`lease_owner = ${this.leases.owner}`;
    const renew = setInterval(() => { void this.leases.take(this.database.db, id, ['id'], mine).catch(() => {}); },
      Math.max(1000, this.settings.timeoutMs / 3));
    try {
      const composed = await compose(this.database, this.settings, { ...row, id, company_id: Number(row.company_id), user_id: Number(row.user_id) });
      const outcome = composed.ok
        ? await sendMessage(this.mailer ??= smtpTransport(this.settings), composed.message)
        : { ok: false as const, error: composed.error, final: true };
      const attempt = Number(row.attempt) + 1;
      const at = this.clock.now();
      const { status, nextAttempt } = settle({ attempt, ok: outcome.ok, final: !outcome.ok && outcome.final, retryAfterS: null, at,
        since: isoOf(row.created) }, MAIL_SCHEDULE);
      mailAttempts.inc({ kind: row.kind, result: status });
      await this.database.db.updateTable('mail_outbox').set({
        attempt, status, next_attempt: nextAttempt, recipient: composed.recipient, modified: formatDatetime(at),
        response: outcome.ok ? outcome.response.slice(0, 1000) : null, error: outcome.ok ? null : outcome.error,
        lease_owner: null, lease_until: null,
      }).where('id', '=', id).where('lease_owner', '=', this.leases.owner).execute();
      // A digest sent or given up no longer needs its items (the outbox row stays, for `mail log`).
      if (status !== 'retrying') await this.database.db.deleteFrom('mail_digest_items').where('digest_id', '=', id).execute();
      if (outcome.ok) return 'delivered';
      this.o.log?.warn({ mail: id, kind: row.kind, user: Number(row.user_id), attempt, status, error: outcome.error }, 'e-mail not delivered');
      return outcome.final ? 'failed' : 'unreachable';
    } finally {
      clearInterval(renew);
    }
  }
}

export interface MailLogEntry {
  readonly id: number; readonly kind: string; readonly company_id: number; readonly user_id: number; readonly recipient: string | null;
  readonly status: string; readonly attempt: number; readonly next_attempt: string | null; readonly response: string | null;
  readonly error: string | null; readonly modified: string;
}

/** The most recently changed outbox rows, newest first. */
export async function recentMail(database: Database, limit: number): Promise<MailLogEntry[]> {
  const rows = await database.db.selectFrom('mail_outbox')
    .select(['id', 'kind', 'company_id', 'user_id', 'recipient', 'status', 'attempt', 'next_attempt', 'response', 'error', 'modified'])
    .orderBy('modified', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), company_id: Number(r.company_id), user_id: Number(r.user_id), attempt: Number(r.attempt) }));
}

/**
 * How many of the outbox rows `ids` are delivered — by this process or by any running
 * instance, whose mail job may have taken a row first: while another process holds one
 * (its lease runs), wait for it, at most `waitMs`.
 */
export async function deliveredOf(database: Database, ids: readonly number[], waitMs: number): Promise<number> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const rows = await database.db.selectFrom('mail_outbox').select(['status', 'lease_until']).where('id', 'in', [...ids]).execute();
    const now = formatDatetime(new Date());
    const held = rows.some((r) => r.status !== 'delivered' && r.status !== 'failed' && r.lease_until !== null && r.lease_until >= now);
    if (!held || Date.now() >= deadline) return rows.filter((r) => r.status === 'delivered').length;
    await delay(200);
  }
}
