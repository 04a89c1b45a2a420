// The webhook dispatcher: the `webhooks` job of every `serve` process
// (jobs/table.ts), and `asset-tracker webhooks dispatch`. Each pass:
//
// 1. Fan-out: for every active webhook, the events committed since its cursor, of
//    its company's tree and of the names it listens to, become deliveries; the
//    cursor moves on in the same transaction. Events are numbered in commit order
//    (events/triggers.ts), so no event is passed over. On PostgreSQL the webhook's
//    row is locked (SKIP LOCKED): one instance fans a webhook out at a time.
// 2. Delivery: a webhook with due deliveries is leased (lease_owner, lease_until)
//    by one instance, which sends them one at a time in event order, renewing the
//    lease before each attempt; so several instances never make the same attempt at
//    once, and a receiver that accepts gets its events in commit order. A process
//    that dies holding a lease loses it when it expires; its attempt is made again
//    (at least once). The leases and what an attempt leaves a delivery in are the
//    outboxes' shared mechanism (db/outbox.ts), which the e-mail outbox uses too.
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { Leases, settle, WAITING } from '../db/outbox.ts';
import { parseQuery, pathFilters } from '../engine/query.ts';
import { updateRecords } from '../engine/update.ts';
import { type Clock, formatDatetime, systemClock } from '../model/dates.ts';
import { parseJson, type JsonObject } from '../model/json.ts';
import { nextTurn } from '../model/slices.ts';
import type { FieldType } from '../model/types.ts';
import { operatorContext } from '../resources/registry.ts';
import { webhooks } from '../resources/webhooks.ts';
import { DELIVERY_TIMEOUT_MS, post } from './deliver.ts';
import { hears } from '../events/names.ts';
import { webhookAttempts, watchBacklog } from './metrics.ts';
import { GIVE_UP_MS, WEBHOOK_SCHEDULE } from './schedule.ts';
import { specSignature, standardSignature } from '../events/secret.ts';

export interface DispatcherOptions {
  readonly allowPrivate: boolean;
  readonly clock?: Clock;
  readonly timeoutMs?: number;
  /** Deliveries per webhook per pass before others get their turn. */
  readonly batch?: number;
  readonly log?: { warn(o: object, msg: string): void; info(o: object, msg: string): void };
}

interface Hook {
  id: number; company_id: number; url: string; events: unknown; secret: string;
  previous_secret: string | null; previous_until: string | null; failing_since: string | null;
}

interface Due { id: number; event_seq: number; event_id: string; event: string; attempt: number; data: unknown; event_created: string; event_company: number | null }

/** Events considered per webhook and slice (each slice its own transaction). */
const FAN_OUT_SLICE = 500;
const PARALLEL_WEBHOOKS = 4;
const DELIVERY_TYPES: readonly FieldType[] = ['int', 'int', 'int', 'string', 'string', 'int', 'string', 'datetime', 'datetime', 'datetime'];

const num = (v: unknown) => Number(v);
const jsonText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const isoOf = (datetime: string) => `${datetime.replace(' ', 'T')}Z`;
const timeOf = (datetime: string) => Date.parse(isoOf(datetime));

export class Dispatcher {
  private readonly clock: Clock;
  private stopped = false;
  /** A webhook's lease outlives one attempt (renewed before each); a process that dies holding it loses it 5 s after. */
  private readonly leases: Leases;

  constructor(private readonly database: Database, private readonly o: DispatcherOptions) {
    this.clock = o.clock ?? systemClock;
    watchBacklog(() => this.backlog());
    this.leases = new Leases('webhooks', (o.timeoutMs ?? DELIVERY_TIMEOUT_MS) + 5000, this.clock);
  }

  /** The dispatcher's passes end at their next safe point (between two attempts or slices). */
  async stop(): Promise<void> {
    this.stopped = true;
  }

  /** One pass: fan out new events, then make every due attempt; `stopping` ends it between two of them. */
  async pass(stopping: () => boolean = () => false): Promise<{ queued: number; attempted: number }> {
    const ends = () => this.stopped || stopping();
    // Only webhooks behind the newest event have anything to fan out: an idle pass is one query.
    const behind = await sql<{ id: number }>`SELECT id FROM webhooks
      WHERE active = 1 AND cursor < (SELECT COALESCE(MAX(seq), 0) FROM events)`.execute(this.database.db);
    let queued = 0;
    for (const w of behind.rows) {
      // A slice at a time, with a turn of the event loop between two, until the webhook has caught up.
      for (let more = true; more && !ends();) {
        const slice = await this.fanOut(num(w.id));
        queued += slice.queued;
        more = slice.more;
        await nextTurn();
      }
    }
    const now = formatDatetime(this.clock.now());
    const due = await this.database.db.selectFrom('webhook_deliveries').select('webhook_id').distinct()
      .where('status', 'in', WAITING).where('next_attempt', '<=', now).limit(100).execute();
    let attempted = 0;
    const queue = due.map((d) => num(d.webhook_id));
    const worker = async () => { for (let id = queue.shift(); id !== undefined && !ends(); id = queue.shift()) attempted += await this.deliverDue(id, ends); };
    await Promise.all(Array.from({ length: PARALLEL_WEBHOOKS }, worker));
    return { queued, attempted };
  }

  /** Deliveries waiting or to be retried (the backlog). */
  async backlog(): Promise<number> {
    const r = await this.database.db.selectFrom('webhook_deliveries').select((e) => e.fn.countAll<number>().as('n'))
      .where('status', 'in', WAITING).executeTakeFirst();
    return num(r?.n ?? 0);
  }

  /** Fans the next slice of events out to one webhook; `more` when events remain past it. */
  private async fanOut(webhookId: number): Promise<{ queued: number; more: boolean }> {
    const { hooks } = this.database;
    const { skipLocked } = hooks;
    return this.database.transaction(async (db) => {
      const none = { queued: 0, more: false };
      const { rows: [w] } = await sql<{ company_id: number; events: unknown; cursor: number }>`SELECT company_id, events, cursor FROM webhooks
        WHERE id = ${webhookId} AND active = 1 ${skipLocked}`.execute(db);
      if (!w) return none;
      const cursor = num(w.cursor);
      const { rows: [top] } = await sql<{ s: number | null }>`SELECT MAX(seq) AS s FROM events`.execute(db);
      const newest = num(top?.s ?? 0);
      const end = Math.min(newest, cursor + FAN_OUT_SLICE);
      if (end <= cursor) return none;
      const { rows } = await sql<{ seq: number; event_id: string; event: string }>`SELECT e.seq, e.event_id, e.event FROM events AS e
        WHERE e.seq > ${cursor} AND e.seq <= ${end}
          AND e.scope_id IN (SELECT descendant_id FROM company_closure WHERE ancestor_id = ${num(w.company_id)}) ORDER BY e.seq`.execute(db);
      const list = JSON.parse(jsonText(w.events)) as string[];
      const now = formatDatetime(this.clock.now());
      const wanted = rows.filter((r) => hears(list, r.event))
        .map((r) => [webhookId, num(w.company_id), num(r.seq), r.event_id, r.event, 0, 'pending', now, now, now]);
      if (wanted.length > 0) {
        await sql`INSERT INTO webhook_deliveries (webhook_id, company_id, event_seq, event_id, event, attempt, status, created, next_attempt, modified)
          ${hooks.selectRows(hooks.rowList(wanted), DELIVERY_TYPES)}`.execute(db);
      }
      await db.updateTable('webhooks').set({ cursor: end }).where('id', '=', webhookId).execute();
      return { queued: wanted.length, more: end < newest };
    });
  }

  /** Takes (or renews) the webhook's lease and reads it as it is now; null when another instance holds it or it is off. */
  private lease(webhookId: number): Promise<Hook | null> {
    return this.leases.take<Hook>(this.database.db, webhookId,
      ['id', 'company_id', 'url', 'events', 'secret', 'previous_secret', 'previous_until', 'failing_since'], sql`active = 1`);
  }

  /** Makes the webhook's due attempts in event order; returns how many were made. */
  private async deliverDue(webhookId: number, ends: () => boolean): Promise<number> {
    if (!(await this.lease(webhookId))) return 0;
    let made = 0;
    try {
      const due = await sql<Due>`SELECT d.id, d.event_seq, d.event_id, d.event, d.attempt, e.data, e.created AS event_created,
          e.company_id AS event_company
        FROM webhook_deliveries AS d JOIN events AS e ON e.seq = d.event_seq
        WHERE d.webhook_id = ${webhookId} AND d.status IN (${sql.join(WAITING)}) AND d.next_attempt <= ${formatDatetime(this.clock.now())}
        ORDER BY d.event_seq LIMIT ${this.o.batch ?? 50}`.execute(this.database.db);
      for (const d of due.rows) {
        // The lease is renewed before each attempt (reading the webhook again); one switched off meanwhile stops here.
        const hook = ends() ? null : await this.lease(webhookId);
        if (!hook) break;
        await this.attempt(hook, d);
        made++;
      }
    } finally {
      await this.leases.release(this.database.db, webhookId);
    }
    return made;
  }

  private async attempt(hook: Hook, d: Due): Promise<void> {
    const now = this.clock.now();
    const timestamp = Math.floor(now.getTime() / 1000);
    const body = `{"id":${JSON.stringify(d.event_id)},"event":${JSON.stringify(d.event)},"timestamp":${JSON.stringify(isoOf(d.event_created))},`
      + `"company_id":${d.event_company === null ? 'null' : num(d.event_company)},"data":${jsonText(d.data)}}`;
    const secrets = [hook.secret, ...(hook.previous_secret && hook.previous_until && hook.previous_until > formatDatetime(now) ? [hook.previous_secret] : [])];
    const outcome = await post(new URL(hook.url), {
      'content-type': 'application/json', 'user-agent': 'asset-tracker-webhooks',
      'x-webhook-timestamp': String(timestamp), 'x-signature': secrets.map((s) => specSignature(s, timestamp, body)).join(' '),
      'webhook-id': d.event_id, 'webhook-timestamp': String(timestamp),
      'webhook-signature': secrets.map((s) => standardSignature(s, d.event_id, timestamp, body)).join(' '),
    }, body, { allowPrivate: this.o.allowPrivate, timeoutMs: this.o.timeoutMs });
    const attempt = num(d.attempt) + 1;
    const at = this.clock.now();
    const stamp = formatDatetime(at);
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const gone = outcome.status === 410;
    const error = ok ? null : (outcome.error ?? `HTTP ${outcome.status}`).slice(0, 1000);
    const { status, nextAttempt } = settle({ attempt, ok, final: gone, retryAfterS: outcome.retryAfter, at, since: new Date(timeOf(d.event_created)) },
      WEBHOOK_SCHEDULE);
    webhookAttempts.inc({ result: status });
    await this.database.db.updateTable('webhook_deliveries').set({
      attempt, status, response_status: outcome.status, error, modified: stamp, next_attempt: nextAttempt,
    }).where('id', '=', num(d.id)).execute();
    if (ok) {
      if (hook.failing_since) await this.database.db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', hook.id).execute();
      return;
    }
    const failingSince = hook.failing_since ?? stamp;
    if (!hook.failing_since) await this.database.db.updateTable('webhooks').set({ failing_since: stamp }).where('id', '=', hook.id).execute();
    this.o.log?.warn({ webhook: hook.id, event: d.event_id, attempt, status: outcome.status, error }, 'webhook delivery failed');
    if (gone) await this.switchOff(hook, 'the receiver answered 410 Gone');
    else if (at.getTime() - timeOf(failingSince) >= GIVE_UP_MS) await this.switchOff(hook, 'it has failed for 24 hours');
  }

  /** Sets the webhook inactive through the engine, so that the change is audited (and an event, like any). */
  private async switchOff(hook: Hook, why: string): Promise<void> {
    const ctx = operatorContext(this.database, num(hook.company_id), this.clock);
    const query = parseQuery(webhooks.def, 'POST', pathFilters(`id=${hook.id}`), undefined, ctx.catalog.lookup, ctx.limits);
    await updateRecords(ctx, webhooks, query, parseJson('{"active":0}') as JsonObject);
    this.o.log?.warn({ webhook: hook.id, why }, 'webhook switched off');
  }
}
