// How a scope's assets stand against their next checks, each against its own
// company's reminder window and today (a company below the caller's may keep
// another window and time zone), as the reminder run decides it: overdue before the
// company's today, due soon from that day to the end of its window. Two statements
// whatever the scope: its companies with their settings, then every count at once —
// the dates' counts summed from the asset tallies (a few rows per company and day),
// beside the failed assets and the queue entries awaiting approval.
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { Param } from '../db/statements.ts';
import { type DueWindow, settingsOf, windowAt } from '../model/reminder-window.ts';
import { inScope } from './scope.ts';

export interface ScopeCompany {
  readonly id: number;
  readonly name: string;
  readonly window: DueWindow;
}

export interface DueCounts {
  readonly overdue: number;
  /** Due within the window, overdue not counted. */
  readonly due: number;
  /** Last result `fail`. */
  readonly failed: number;
  /** Queue entries not yet released. */
  readonly queued: number;
  /** Assets not overdue, by the month of their next check (`YYYY-MM`). */
  readonly months: ReadonlyMap<string, number>;
  /** Overdue assets by company (companies without any left out). */
  readonly overdueBy: ReadonlyMap<number, number>;
}

const WINDOWS = new Param('windows');

const companiesOf = (database: Database) => database.statements.get('due-summary|companies', () => sql`
  SELECT c.id, c.name, c.data FROM companies AS c WHERE ${inScope(database.hooks, sql`c.id`)} ORDER BY c.id`);

// Keys: 'overdue' (per company, in c), a month 'YYYY-MM', 'fail', 'queue'; `due` only on the dates' rows. The
// failed assets are counted from their partial index (the literal 'fail' lets both engines use it).
const countsOf = (database: Database) => database.statements.get('due-summary|counts', () => {
  const { hooks } = database;
  const overdue = sql`t.next_check < w.today`;
  return sql`WITH w (company_id, today, soon) AS (${hooks.selectRows(WINDOWS, ['int', 'string', 'string'])})
  SELECT CASE WHEN ${overdue} THEN 'overdue' ELSE SUBSTR(t.next_check, 1, 7) END AS k, CASE WHEN ${overdue} THEN w.company_id ELSE 0 END AS c,
    SUM(t.n) AS n, SUM(CASE WHEN t.next_check >= w.today AND t.next_check <= w.soon THEN t.n ELSE 0 END) AS due
  FROM w JOIN asset_tallies AS t ON t.company_id = w.company_id WHERE ${inScope(hooks, sql`t.company_id`)} GROUP BY 1, 2
  UNION ALL SELECT 'fail', 0, COUNT(*), 0 FROM assets AS a WHERE ${inScope(hooks, sql`a.company_id`)} AND a.last_result = 'fail'
  UNION ALL SELECT 'queue', 0, COUNT(*), 0 FROM assetqueue AS q WHERE ${inScope(hooks, sql`q.company_id`)} AND q.released = 0`;
});

const jsonText = (data: unknown): string | null => (data === null || data === undefined ? null : typeof data === 'string' ? data : JSON.stringify(data));

/** The companies of the scope under `root`, each with its window at `now`, in id order. */
export async function scopeCompanies(database: Database, root: number, now: Date): Promise<ScopeCompany[]> {
  const rows = await database.read<{ id: number; name: string; data: unknown }>(companiesOf(database), { root });
  return rows.map((r) => ({ id: Number(r.id), name: r.name, window: windowAt(settingsOf(Number(r.id), jsonText(r.data)), now) }));
}

/** The counts of the scope under `root`, its companies' windows given (scopeCompanies). */
export async function dueCounts(database: Database, root: number, companies: readonly ScopeCompany[]): Promise<DueCounts> {
  const windows = database.hooks.rowList(companies.map((c) => [c.id, c.window.today, c.window.soon]));
  const rows = await database.read<{ k: string; c: number | string; n: number | string; due: number | string }>(countsOf(database), { root, windows });
  const counts = { overdue: 0, due: 0, failed: 0, queued: 0 };
  const months = new Map<string, number>();
  const overdueBy = new Map<number, number>();
  for (const r of rows) {
    const n = Number(r.n);
    counts.due += Number(r.due);
    if (r.k === 'fail') counts.failed = n;
    else if (r.k === 'queue') counts.queued = n;
    else if (r.k !== 'overdue') months.set(r.k, n);
    else {
      counts.overdue += n;
      overdueBy.set(Number(r.c), n);
    }
  }
  return { ...counts, months, overdueBy };
}

