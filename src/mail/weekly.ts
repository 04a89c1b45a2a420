// The weekly due list: a company whose `data.weekly_report` is true sends each of its
// own admin users, once per ISO week, the assets of its scope that are overdue or due
// within its reminder window — at the first reminder run at or after Monday 07:00 in
// its time zone, or when the operator asks (`reports weekly`). The week is recorded
// (weekly_reports, one row per company and week) in the same transaction as the
// outbox rows, so however many instances run, and whatever restarts, a week's list is
// queued once. The list itself is read when the mail is sent.
import type { Readable } from 'node:stream';
import { sql } from 'kysely';
import { levelOf } from '../auth/access.ts';
import type { Database, Db } from '../db/database.ts';
import { csvExport } from '../engine/csv.ts';
import { pdfExport } from '../engine/pdf.ts';
import { parseQuery, pathFilters } from '../engine/query.ts';
import { addDays, type Clock, formatDatetime, todayIn } from '../model/dates.ts';
import { JsonObject, parseJson } from '../model/json.ts';
import { NEVER_REMINDED, settingsOf } from '../model/reminder-window.ts';
import { ASSET_LIST } from '../resources/printed-lists.ts';
import { operatorContext } from '../resources/registry.ts';
import { LISTED_AT_MOST } from './digest.ts';
import type { DueRow } from './render.ts';

/** What a weekly list's outbox row keeps: the week, and the day and horizon its rows are read for. */
export interface WeeklyData { readonly week: string; readonly today: string; readonly horizon: string }

/** The ISO week (2026-W48) of a date. */
export function isoWeek(date: string): string {
  const t = Date.parse(`${date}T00:00:00Z`);
  const weekday = (new Date(t).getUTCDay() + 6) % 7;
  const thursday = new Date(t + (3 - weekday) * 86_400_000);
  const year = thursday.getUTCFullYear();
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * 86_400_000));
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** Whether this week's list is due in `zone` at `now`: from Monday 07:00 on. */
export function weekOpened(now: Date, zone: string): boolean {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', hour: '2-digit', hourCycle: 'h23' }).formatToParts(now);
  const get = (type: string) => parts.find((p) => p.type === type)?.value;
  return get('weekday') !== 'Mon' || Number(get('hour')) >= 7;
}

const wantsWeekly = (data: string | null): boolean => {
  const v = data ? parseJson(data) : null;
  return v instanceof JsonObject && v.entries.get('weekly_report') === true;
};

/** Queues this week's list of every company that sends one and whose week has opened; how many were queued. */
export async function queueWeeklyReports(database: Database, clock: Clock): Promise<number> {
  const companies = await database.db.selectFrom('companies').select(['id', 'data']).where(sql<string>`CAST(data AS TEXT)`, 'like', '%weekly_report%').orderBy('id').execute();
  let queued = 0;
  for (const c of companies) {
    if (!wantsWeekly(c.data)) continue;
    const s = settingsOf(Number(c.id), c.data);
    if (!weekOpened(clock.now(), s.timeZone)) continue;
    if ((await queueWeekly(database, s.id, clock)).queued !== null) queued++;
  }
  return queued;
}

/**
 * Queues the company's list for this week unless it was queued already: the week and
 * the outbox rows (one per admin user of the company) in one transaction; `queued` is
 * null when the week had been queued before.
 */
export async function queueWeekly(database: Database, companyId: number, clock: Clock): Promise<{ week: string; queued: number[] | null }> {
  const row = await database.db.selectFrom('companies').select('data').where('id', '=', companyId).executeTakeFirst();
  const s = settingsOf(companyId, row?.data ?? null);
  const now = clock.now();
  const today = todayIn(s.timeZone, now);
  const data: WeeklyData = { week: isoWeek(today), today, horizon: addDays(today, s.window) };
  const queued = await database.transaction(async (db) => {
    const stamp = formatDatetime(now);
    const { rows } = await sql<{ company_id: number }>`INSERT INTO weekly_reports (company_id, week, created)
      VALUES (${companyId}, ${data.week}, ${stamp}) ON CONFLICT DO NOTHING RETURNING company_id`.execute(db);
    if (rows.length === 0) return null;
    const users = await db.selectFrom('users').select(['id', 'permissions']).where('company_id', '=', companyId).orderBy('id').execute();
    const admins = users.filter((u) => levelOf(u.permissions).level === 'admin').map((u) => Number(u.id));
    const ids: number[] = [];
    for (const userId of admins) {
      const r = await db.insertInto('mail_outbox').values({ company_id: companyId, user_id: userId, kind: 'weekly', data: JSON.stringify(data),
        attempt: 0, status: 'pending', next_attempt: stamp, created: stamp, modified: stamp }).returning('id').executeTakeFirstOrThrow();
      ids.push(Number(r.id));
    }
    return ids;
  });
  return { week: data.week, queued };
}

/** The list's rows (the first LISTED_AT_MOST, by next check) and how many more it has. */
export async function weeklyRows(db: Db, companyId: number, d: WeeklyData): Promise<{ rows: DueRow[]; more: number }> {
  const where = sql`a.company_id IN (SELECT descendant_id FROM company_closure WHERE ancestor_id = ${companyId})
    AND a.next_check <= ${d.horizon} AND LOWER(a.status) NOT IN (${sql.join(NEVER_REMINDED)})`;
  const { rows } = await sql<{ id: number; asset_no: string; description: string; location: string | null; next_check: string }>`
    SELECT a.id, a.asset_no, a.description, l.description AS location, a.next_check FROM assets a LEFT JOIN locations l ON l.id = a.location_id
    WHERE ${where} ORDER BY a.next_check, a.id LIMIT ${LISTED_AT_MOST}`.execute(db);
  const { rows: [count] } = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM assets a WHERE ${where}`.execute(db);
  return {
    rows: rows.map((r) => ({ assetId: Number(r.id), assetNo: r.asset_no, description: r.description, location: r.location,
      nextCheck: r.next_check, overdue: r.next_check < d.today })),
    more: Math.max(0, Number(count?.n ?? 0) - rows.length),
  };
}

export interface Attachment { readonly filename: string; readonly contentType: string; readonly content: Readable }

/**
 * The list's attachments, both streamed: its rows as the API's printed list draws them
 * (`Accept: application/pdf`) and as its CSV export writes them (every column).
 */
export async function weeklyAttachments(database: Database, companyId: number, d: WeeklyData): Promise<Attachment[]> {
  const ctx = operatorContext(database, companyId);
  const assets = ctx.catalog.lookup('assets');
  const filters = pathFilters(`next_check-${d.horizon}`);
  const query = parseQuery(assets, 'GET', filters, undefined, ctx.catalog.lookup, ctx.limits);
  const listed = (record: JsonObject) => {
    const status = record.entries.get('status');
    return typeof status !== 'string' || !NEVER_REMINDED.includes(status.toLowerCase());
  };
  const pdf = await pdfExport(ctx, assets, query, ASSET_LIST, filters, listed);
  const csv = await csvExport(ctx, assets, query, undefined, listed);
  return [
    { filename: `due-list-${d.week}.pdf`, contentType: 'application/pdf', content: pdf },
    { filename: `due-list-${d.week}.csv`, contentType: 'text/csv; charset=utf-8', content: csv },
  ];
}
