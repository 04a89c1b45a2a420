// The reminder run (spec §8.2): one reminder per due asset and due date, and
// delivery of reminders that became active as messages to the company's users
// who take reminders. Idempotent, and safe when several instances run it at
// once: creation relies on a unique index, delivery claims each reminder with a
// conditional update before sending it.
import { sql } from 'kysely';
import type { Database, Db } from '../db/database.ts';
import { insertAudit, type AuditEntry } from '../engine/audit.ts';
import { type Ctx, shapeOf } from '../engine/context.ts';
import { emitEvents } from '../events/triggers.ts';
import { addDays, type Clock, formatDatetime } from '../model/dates.ts';
import { JsonNumber, JsonObject, parseJson } from '../model/json.ts';
import { chunks } from '../model/chunks.ts';
import { observeReminderRun } from '../metrics.ts';
import { operatorContext } from '../resources/registry.ts';

export interface ReminderRun {
  readonly created: number;
  readonly delivered: number;
  readonly messages: number;
  /** Companies whose part of the run failed (the others still ran). */
  readonly failed: readonly number[];
}

const DEFAULT_WINDOW = 30;
const NEVER_REMINDED = ['retired', 'disposed', 'inactive'];

interface CompanySettings { readonly id: number; readonly window: number; readonly timeZone: string }

function settingsOf(id: number, data: string | null): CompanySettings {
  const v = data ? parseJson(data) : null;
  const get = (k: string) => (v instanceof JsonObject ? v.entries.get(k) : undefined);
  const days = get('reminder_days');
  const zone = get('timezone');
  return {
    id,
    window: days instanceof JsonNumber && Number.isInteger(days.value) && days.value >= 0 ? Math.min(days.value, 3650) : DEFAULT_WINDOW,
    timeZone: typeof zone === 'string' && validZone(zone) ? zone : 'UTC',
  };
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Today's date in a company's time zone. */
export function todayIn(timeZone: string, now: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

/**
 * One run over every company. `stopping` is asked between companies: a run that
 * is told to stop ends there, every company it did is complete (a shutdown).
 */
export async function runReminders(database: Database, clock: Clock, onError: (companyId: number, error: unknown) => void = () => {},
  stopping: () => boolean = () => false): Promise<ReminderRun> {
  const started = Date.now();
  const companies = await database.db.selectFrom('companies').select(['id', 'data']).orderBy('id').execute();
  let created = 0;
  let delivered = 0;
  let messages = 0;
  const failed: number[] = [];
  for (const c of companies) {
    if (stopping()) break;
    const settings = settingsOf(Number(c.id), c.data);
    const ctx = operatorContext(database, settings.id, clock);
    try {
      await noticeDue(ctx, settings);
      created += await createReminders(ctx, settings);
      const sent = await deliverReminders(ctx, settings);
      delivered += sent.reminders;
      messages += sent.messages;
    } catch (error) {
      failed.push(settings.id);
      onError(settings.id, error);
    }
  }
  const run = { created, delivered, messages, failed };
  observeReminderRun(run, started);
  return run;
}

interface DueAsset { id: number; asset_no: string; description: string; next_check: string }

/** Work is committed in chunks, so that a large first run never holds the database for long. */
const CHUNK = 200;

async function createReminders(ctx: Ctx, s: CompanySettings): Promise<number> {
  const now = ctx.clock.now();
  const today = todayIn(s.timeZone, now);
  const { rows: due } = await sql<DueAsset>`SELECT a.id, a.asset_no, a.description, a.next_check FROM assets a
    WHERE a.company_id = ${s.id} AND a.next_check IS NOT NULL AND a.next_check <= ${addDays(today, s.window)}
    AND LOWER(a.status) NOT IN (${sql.join(NEVER_REMINDED)})
    AND NOT EXISTS (SELECT 1 FROM assetreminders r WHERE r.asset_id = a.id AND r.due_date = a.next_check AND r.user_id IS NULL)
    ORDER BY a.id`.execute(ctx.database.db);
  let created = 0;
  for (const part of chunks(due, CHUNK)) {
    const reminders = part.map((a) => ({
      asset: a, remind: addDays(a.next_check, -s.window),
      message: `${a.next_check < today ? 'Overdue' : 'Due'}: check of asset ${a.asset_no}${a.description ? ` (${a.description})` : ''} on ${a.next_check}`,
    }));
    created += await ctx.database.transaction(async (db) => {
      // A concurrent run may have made some of these already: the unique index keeps one.
      const { rows } = await sql<{ id: number; asset_id: number }>`INSERT INTO assetreminders
        (company_id, asset_id, user_id, due_date, remind_date, message, sent, acknowledged, data)
        VALUES ${sql.join(reminders.map((r) => sql`(${s.id}, ${r.asset.id}, NULL, ${r.asset.next_check}, ${r.remind}, ${r.message}, 0, 0, NULL)`))}
        ON CONFLICT DO NOTHING RETURNING id, asset_id`.execute(db);
      const byAsset = new Map(reminders.map((r) => [r.asset.id, r]));
      const entries: AuditEntry[] = rows.map(({ id, asset_id: assetId }) => {
        const r = byAsset.get(Number(assetId))!;
        return { endpoint: 'assetreminders', action: 'create', recordId: Number(id), companyId: s.id, assetId: Number(assetId),
          message: `Created assetreminders record ${id} (reminder run)`,
          newdata: JSON.stringify({ asset_id: Number(assetId), due_date: r.asset.next_check, remind_date: r.remind, message: r.message }) };
      });
      await insertAudit(ctx, db, formatDatetime(now), entries);
      return entries.length;
    });
  }
  return created;
}

/** `assets.due` and `assets.overdue` (spec §9): once per asset, due date and kind, kept in due_notices. */
async function noticeDue(ctx: Ctx, s: CompanySettings): Promise<void> {
  const today = todayIn(s.timeZone, ctx.clock.now());
  await ctx.database.transaction(async (db) => {
    const { rows } = await sql<{ asset_id: number; kind: string }>`INSERT INTO due_notices (asset_id, due_date, kind)
      SELECT a.id, a.next_check, CASE WHEN a.next_check < ${today} THEN 'overdue' ELSE 'due' END FROM assets a
      WHERE a.company_id = ${s.id} AND a.next_check IS NOT NULL AND a.next_check <= ${addDays(today, s.window)}
      AND LOWER(a.status) NOT IN (${sql.join(NEVER_REMINDED)}) ORDER BY a.id
      ON CONFLICT DO NOTHING RETURNING asset_id, kind`.execute(db);
    const shape = shapeOf(ctx);
    const assets = ctx.catalog.lookup('assets');
    for (const kind of ['due', 'overdue']) {
      const ids = rows.filter((r) => r.kind === kind).map((r) => Number(r.asset_id)).sort((a, b) => a - b);
      for (const part of chunks(ids, 1000)) await emitEvents(db, shape, assets, { op: kind, event: `assets.${kind}` }, part);
    }
  });
}

interface ActiveReminder { id: number; asset_id: number; user_id: number | null; message: string; due_date: string }

async function deliverReminders(ctx: Ctx, s: CompanySettings): Promise<{ reminders: number; messages: number }> {
  const now = ctx.clock.now();
  const at = formatDatetime(now);
  // A reminder made by hand for an asset that is never reminded stays unsent too.
  const { rows: active } = await sql<ActiveReminder>`SELECT r.id, r.asset_id, r.user_id, r.message, r.due_date FROM assetreminders r
    JOIN assets a ON a.id = r.asset_id
    WHERE r.company_id = ${s.id} AND r.sent = 0 AND r.remind_date <= ${todayIn(s.timeZone, now)}
    AND LOWER(a.status) NOT IN (${sql.join(NEVER_REMINDED)}) ORDER BY r.id`.execute(ctx.database.db);
  let reminders = 0;
  let messages = 0;
  for (const part of chunks(active, CHUNK)) {
    await ctx.database.transaction(async (db) => {
      // Claiming first means a reminder another instance is delivering is skipped here.
      const { rows: claimed } = await sql<{ id: number }>`UPDATE assetreminders SET sent = 1
        WHERE id IN (${sql.join(part.map((r) => r.id))}) AND sent = 0 RETURNING id`.execute(db);
      const mine = new Set(claimed.map((c) => Number(c.id)));
      const entries: AuditEntry[] = [];
      for (const r of part.filter((x) => mine.has(Number(x.id)))) {
        entries.push({ endpoint: 'assetreminders', action: 'update', recordId: r.id, companyId: s.id, assetId: r.asset_id,
          message: `Updated assetreminders record ${r.id} (reminder run)`, olddata: '{"sent":0}', newdata: '{"sent":1}' });
        for (const userId of await recipientsOf(db, s.id, r.user_id)) {
          const data = JSON.stringify({ reminder_id: r.id, asset_id: r.asset_id, due_date: r.due_date });
          const { rows } = await sql<{ id: number }>`INSERT INTO messages (sender_user_id, target_user_id, company_id, message_read,
            date_range_start, date_range_end, messagetext, data, modified)
            VALUES (NULL, ${userId}, ${s.id}, 0, NULL, NULL, ${r.message}, ${data}, ${at}) RETURNING id`.execute(db);
          const id = Number(rows[0]!.id);
          entries.push({ endpoint: 'messages', action: 'create', recordId: id, companyId: s.id, message: `Created messages record ${id} (reminder run)`,
            newdata: JSON.stringify({ target_user_id: userId, messagetext: r.message, data: JSON.parse(data) }) });
          messages++;
        }
        reminders++;
      }
      await insertAudit(ctx, db, at, entries);
    });
  }
  return { reminders, messages };
}

/** A reminder for a user goes to that user; one for nobody in particular to every user of the company who takes reminders. */
async function recipientsOf(db: Db, companyId: number, userId: number | null): Promise<number[]> {
  let q = db.selectFrom('users').select('id').where('company_id', '=', companyId).where('reminders', '=', 1);
  if (userId !== null) q = q.where('id', '=', userId);
  return (await q.orderBy('id').execute()).map((u) => Number(u.id));
}
