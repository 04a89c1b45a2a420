// Where an asset stands against its next check, as the reminder run sees it: overdue
// before today, due within the company's reminder window, else in date. Shown as
// words and a shape, never colour alone.
import { settingsOf } from '../jobs/reminders.ts';
import { addDays, todayIn } from '../model/dates.ts';

export type DueState = 'overdue' | 'due' | 'ok' | 'none';

export const DUE_TEXT: Readonly<Record<DueState, string>> = { overdue: 'Overdue', due: 'Due soon', ok: 'In date', none: 'No date' };

export interface DueWindow {
  readonly today: string;
  /** The last day that counts as due soon. */
  readonly soon: string;
}

/** The window of a company from its record's `data` (as JSON text) at `now`. */
export function dueWindow(companyId: number, data: unknown, now: Date): DueWindow {
  const s = settingsOf(companyId, data === null || data === undefined ? null : JSON.stringify(data));
  const today = todayIn(s.timeZone, now);
  return { today, soon: addDays(today, s.window) };
}

export function dueState(nextCheck: string | null | undefined, w: DueWindow): DueState {
  if (!nextCheck) return 'none';
  if (nextCheck < w.today) return 'overdue';
  return nextCheck <= w.soon ? 'due' : 'ok';
}
