// The reminder run: one reminder per due asset and due date, and
// delivery of reminders that became active as messages to the company's users
// who take reminders; and the `assets.due`/`assets.overdue` notices.
//
// Each step walks a company's records in date order in slices (model/slices.ts), each
// slice its own short transaction, so a first run over 100,000 due assets never
// holds the database for long. Idempotent, resumable and safe when several
// instances run it at once: a run that stops (or dies) between slices leaves every
// slice it did complete, and the next run takes up what is left — creation relies
// on a unique index (one run-made reminder per asset and due date), notices on
// another (once per asset, due date and kind), and delivery claims each reminder
// with a conditional update before it writes its messages.
import { sql } from 'kysely';
import type { Database, Db } from '../db/database.ts';
import type { SqlDialect } from '../model/dialect.ts';
import { insertAudit } from '../engine/audit.ts';
import { emitEvents } from '../events/triggers.ts';
import { addDays, type Clock, formatDatetime } from '../model/dates.ts';
import { type CompanySettings, NEVER_REMINDED, settingsOf, windowAt } from '../model/reminder-window.ts';
import type { FieldType } from '../model/types.ts';
import { observeReminderRun } from '../metrics.ts';
import { operatorContext } from '../resources/registry.ts';
import { DEFAULT_SLICES, type SliceLimits, Slices } from '../model/slices.ts';
import type { AuditEntry, Ctx } from '../engine/types.ts';
import { type DigestItem, queueDigestItems, sealDigests } from '../mail/digest.ts';
import { queueWeeklyReports } from '../mail/weekly.ts';

export interface ReminderRun {
  readonly created: number;
  readonly delivered: number;
  readonly messages: number;
  /** Companies whose part of the run failed (the others still ran). */
  readonly failed: readonly number[];
  /** With e-mail on: the digests and weekly due lists queued. */
  readonly digests?: number;
  readonly weekly?: number;
}

export interface ReminderOptions {
  readonly onError?: (companyId: number, error: unknown) => void;
  /** Asked between slices: a run told to stop ends there (a shutdown); the next run goes on. */
  readonly stopping?: () => boolean;
  readonly slices?: SliceLimits;
  /** E-mail is on: each user who takes reminders gets a digest of those that came due for them (and weekly lists go out). */
  readonly mail?: boolean;
}

export { type CompanySettings, settingsOf } from '../model/reminder-window.ts';

/** One run over every company. */
export async function runReminders(database: Database, clock: Clock, o: ReminderOptions = {}): Promise<ReminderRun> {
  const started = Date.now();
  const stopping = o.stopping ?? (() => false);
  const companies = await database.db.selectFrom('companies').select(['id', 'data']).orderBy('id').execute();
  const totals = { created: 0, delivered: 0, messages: 0 };
  const failed: number[] = [];
  let digests = 0;
  for (const c of companies) {
    if (stopping()) break;
    const settings = settingsOf(Number(c.id), c.data);
    const run = new CompanyRun(operatorContext(database, settings.id, clock), settings, new Slices(o.slices ?? DEFAULT_SLICES), stopping,
      o.mail === true);
    try {
      await run.noticeDue();
      totals.created += await run.createReminders();
      const sent = await run.deliverReminders();
      totals.delivered += sent.reminders;
      totals.messages += sent.messages;
      if (o.mail) digests += await sealDigests(database, settings.id, clock);
    } catch (error) {
      failed.push(settings.id);
      o.onError?.(settings.id, error);
    }
  }
  const weekly = o.mail && !stopping() ? await queueWeeklyReports(database, clock) : 0;
  const result = { ...totals, failed, ...(o.mail ? { digests, weekly } : {}) };
  observeReminderRun(result, started);
  return result;
}

interface DueAsset { id: number; asset_no: string; description: string; next_check: string }
interface ActiveReminder { id: number; asset_id: number; user_id: number | null; message: string; due_date: string; remind_date: string }

/** Where a walk stands: the date and id of the last record it did. */
interface Cursor { readonly date: string; readonly id: number }
const endOf = (due: readonly DueAsset[]): Cursor => {
  const last = due[due.length - 1]!;
  return { date: last.next_check, id: Number(last.id) };
};

const MESSAGE_TYPES: readonly FieldType[] = ['int', 'int', 'int', 'int', 'date', 'date', 'string', 'json', 'datetime'];
const REMINDER_TYPES: readonly FieldType[] = ['int', 'int', 'int', 'date', 'date', 'string', 'int', 'int', 'json'];

/** One company's part of a run, a slice at a time. */
class CompanyRun {
  private readonly hooks: SqlDialect;
  private readonly today: string;
  /** Assets with a next check on or before this date are due. */
  private readonly horizon: string;
  private readonly now: Date;

  constructor(private readonly ctx: Ctx, private readonly s: CompanySettings, private readonly slices: Slices,
    private readonly stopping: () => boolean, private readonly mail: boolean) {
    this.hooks = ctx.database.hooks;
    this.now = ctx.clock.now();
    const w = windowAt(s, this.now);
    this.today = w.today;
    this.horizon = w.soon;
  }

  /**
   * Runs `slice` until it reports no more, or the run is told to stop. A slice gets
   * its size and where the last one ended: a walk goes in (date, id) order along an
   * index that begins with the company and that date, so it reads only the records
   * it may act on, and each slice goes on from where the last one ended.
   */
  private async walk(slice: (db: Db, size: number, after: Cursor) => Promise<Cursor | null>): Promise<void> {
    let after: Cursor = { date: '', id: 0 };
    while (!this.stopping()) {
      const last = await this.slices.run((size) => this.ctx.database.transaction(async (db) => {
        // The run fills assetreminders and messages as it goes: plans made for their sizes now.
        await this.hooks.plansPerExecution.execute(db);
        return slice(db, size, after);
      }));
      if (last === null) return;
      after = last;
    }
  }

  /** The company's assets that are due, after `after`, in (next_check, id) order. */
  private dueAssets(size: number, after: Cursor, lacking = sql``) {
    return sql<DueAsset>`SELECT a.id, a.asset_no, a.description, a.next_check FROM assets a
      WHERE a.company_id = ${this.s.id} AND (a.next_check, a.id) > (${after.date}, ${after.id}) AND a.next_check <= ${this.horizon}
      AND LOWER(a.status) NOT IN (${sql.join(NEVER_REMINDED)}) ${lacking} ORDER BY a.next_check, a.id LIMIT ${size}`;
  }

  /** `assets.due` and `assets.overdue`: once per asset, due date and kind, kept in due_notices. */
  async noticeDue(): Promise<void> {
    const assets = this.ctx.catalog.lookup('assets');
    await this.walk(async (db, size, after) => {
      const { rows: due } = await this.dueAssets(size, after).execute(db);
      if (due.length === 0) return null;
      const kinds = due.map((a) => ({ asset_id: Number(a.id), due_date: a.next_check, kind: a.next_check < this.today ? 'overdue' : 'due' }));
      const { rows } = await sql<{ asset_id: number; kind: string }>`INSERT INTO due_notices (asset_id, due_date, kind)
        ${this.rows(kinds.map((k) => [k.asset_id, k.due_date, k.kind]), ['int', 'date', 'string'])}
        ON CONFLICT DO NOTHING RETURNING asset_id, kind`.execute(db);
      for (const kind of ['due', 'overdue']) {
        const ids = rows.filter((r) => r.kind === kind).map((r) => Number(r.asset_id)).sort((a, b) => a - b);
        await emitEvents(db, this.hooks, assets, { op: kind, event: `assets.${kind}` }, ids);
      }
      return endOf(due);
    });
  }

  /** One reminder per due asset and due date that has none yet. */
  async createReminders(): Promise<number> {
    let created = 0;
    const lacking = sql`AND NOT EXISTS (SELECT 1 FROM assetreminders r WHERE r.asset_id = a.id AND r.due_date = a.next_check AND r.user_id IS NULL)`;
    const { id: companyId, window } = this.s;
    await this.walk(async (db, size, after) => {
      const { rows: due } = await this.dueAssets(size, after, lacking).execute(db);
      if (due.length === 0) return null;
      const reminders = due.map((a) => ({
        asset: a, remind: addDays(a.next_check, -window),
        message: `${a.next_check < this.today ? 'Overdue' : 'Due'}: check of asset ${a.asset_no}${a.description ? ` (${a.description})` : ''} on ${a.next_check}`,
      }));
      // A concurrent run may have made some of these already: the unique index keeps one.
      const { rows } = await sql<{ id: number; asset_id: number }>`INSERT INTO assetreminders
        (company_id, asset_id, user_id, due_date, remind_date, message, sent, acknowledged, data)
        ${this.rows(reminders.map((r) => [companyId, Number(r.asset.id), null, r.asset.next_check, r.remind, r.message, 0, 0, null]), REMINDER_TYPES)}
        ON CONFLICT DO NOTHING RETURNING id, asset_id`.execute(db);
      const byAsset = new Map(reminders.map((r) => [Number(r.asset.id), r]));
      const entries: AuditEntry[] = rows.map(({ id, asset_id: assetId }) => {
        const r = byAsset.get(Number(assetId))!;
        return { endpoint: 'assetreminders', action: 'create', recordId: Number(id), companyId, assetId: Number(assetId),
          message: `Created assetreminders record ${id} (reminder run)`,
          newdata: JSON.stringify({ asset_id: Number(assetId), due_date: r.asset.next_check, remind_date: r.remind, message: r.message }) };
      });
      await insertAudit(this.ctx, db, formatDatetime(this.now), entries);
      created += entries.length;
      return endOf(due);
    });
    return created;
  }

  /**
   * Reminders that became active, as messages to their user, or (none named) to
   * every user of the company who takes reminders. Claiming first means a reminder
   * another instance is delivering is skipped here.
   */
  async deliverReminders(): Promise<{ reminders: number; messages: number }> {
    let reminders = 0;
    let messages = 0;
    const at = formatDatetime(this.now);
    const companyId = this.s.id;
    await this.walk(async (db, slice, after) => {
      const takers = (await db.selectFrom('users').select('id').where('company_id', '=', companyId).where('reminders', '=', 1)
        .orderBy('id').execute()).map((u) => Number(u.id));
      // A slice writes about `slice` messages, whatever the number of users who take them.
      const size = Math.max(1, Math.floor(slice / Math.max(1, takers.length)));
      // A reminder made by hand for an asset that is never reminded stays unsent too.
      const { rows: active } = await sql<ActiveReminder>`SELECT r.id, r.asset_id, r.user_id, r.message, r.due_date, r.remind_date FROM assetreminders r
        JOIN assets a ON a.id = r.asset_id
        WHERE r.company_id = ${companyId} AND r.sent = 0 AND (r.remind_date, r.id) > (${after.date}, ${after.id}) AND r.remind_date <= ${this.today}
        AND LOWER(a.status) NOT IN (${sql.join(NEVER_REMINDED)}) ORDER BY r.remind_date, r.id LIMIT ${size}`.execute(db);
      if (active.length === 0) return null;
      const { rows: claimed } = await sql<{ id: number }>`UPDATE assetreminders SET sent = 1
        WHERE ${this.hooks.inIds(sql.ref('id'), this.hooks.idList(active.map((r) => Number(r.id))))} AND sent = 0 RETURNING id`.execute(db);
      const mine = new Set(claimed.map((c) => Number(c.id)));
      const sending = active.filter((r) => mine.has(Number(r.id))).map((r) => {
        const data = JSON.stringify({ reminder_id: Number(r.id), asset_id: Number(r.asset_id), due_date: r.due_date });
        return { r, data, to: r.user_id === null ? takers : takers.filter((u) => u === Number(r.user_id)) };
      });
      const rows = sending.flatMap(({ r, data, to }) => to.map((userId) => [null, userId, companyId, 0, null, null, r.message, data, at]));
      const ids = await this.insertMessages(db, rows);
      const entries: AuditEntry[] = [];
      let next = 0;
      for (const { r, data, to } of sending) {
        entries.push({ endpoint: 'assetreminders', action: 'update', recordId: Number(r.id), companyId, assetId: Number(r.asset_id),
          message: `Updated assetreminders record ${r.id} (reminder run)`, olddata: '{"sent":0}', newdata: '{"sent":1}' });
        for (const userId of to) {
          const id = ids[next++]!;
          entries.push({ endpoint: 'messages', action: 'create', recordId: id, companyId, message: `Created messages record ${id} (reminder run)`,
            newdata: JSON.stringify({ target_user_id: userId, messagetext: r.message, data: JSON.parse(data) as unknown }) });
        }
      }
      await insertAudit(this.ctx, db, at, entries);
      if (this.mail) {
        const items = sending.flatMap(({ r, to }): DigestItem[] => to.map((u) => [u, Number(r.asset_id), r.due_date, r.due_date < this.today ? 1 : 0]));
        await queueDigestItems(db, this.hooks, companyId, items);
      }
      reminders += sending.length;
      messages += rows.length;
      const last = active[active.length - 1]!;
      return { date: last.remind_date, id: Number(last.id) };
    });
    return { reminders, messages };
  }

  /** Inserts the messages in their order; their ids in the same order. */
  private async insertMessages(db: Db, rows: readonly (readonly unknown[])[]): Promise<number[]> {
    if (rows.length === 0) return [];
    const { rows: out } = await sql<{ id: number }>`INSERT INTO messages (sender_user_id, target_user_id, company_id, message_read,
      date_range_start, date_range_end, messagetext, data, modified) ${this.rows(rows, MESSAGE_TYPES)} RETURNING id`.execute(db);
    return out.map((r) => Number(r.id)).sort((a, b) => a - b);
  }

  /** Rows for a multi-row INSERT, as one parameter (one statement text whatever their number). */
  private rows(rows: readonly (readonly unknown[])[], types: readonly FieldType[]) {
    return this.hooks.selectRows(this.hooks.rowList(rows), types);
  }
}
