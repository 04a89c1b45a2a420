// Where an asset stands against its next check, as the reminder run sees it: overdue
// before its company's today, due within its company's reminder window, else in date.
// Shown as words and a shape, never colour alone.
import { type DueWindow, settingsOf, windowAt } from '../model/reminder-window.ts';

export type { DueWindow };
export type DueState = 'overdue' | 'due' | 'ok' | 'none';

export const DUE_TEXT: Readonly<Record<DueState, string>> = { overdue: 'Overdue', due: 'Due soon', ok: 'In date', none: 'No date' };

/** The window of a company from its record's `data` (as JSON text) at `now`. */
export function dueWindow(companyId: number, data: unknown, now: Date): DueWindow {
  return windowAt(settingsOf(companyId, data === null || data === undefined ? null : JSON.stringify(data)), now);
}

export function dueState(nextCheck: string | null | undefined, w: DueWindow): DueState {
  if (!nextCheck) return 'none';
  if (nextCheck < w.today) return 'overdue';
  return nextCheck <= w.soon ? 'due' : 'ok';
}
