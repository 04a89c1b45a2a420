// A company's reminder window and time zone, from its record's `data`
// (`reminder_days`, default 30; `timezone`, an IANA name, default UTC), and the
// days they make at an instant: an asset is overdue when its next check is before
// the company's today, due when it is on or before today + the window. The reminder
// run, the portal's dashboard and the e-mails all decide due-ness from here.
import { addDays, todayIn, validZone } from './dates.ts';
import { JsonNumber, JsonObject, parseJson } from './json.ts';

const DEFAULT_WINDOW = 30;
/** Statuses (in lower case) whose assets are never reminded, nor listed as due. */
export const NEVER_REMINDED = ['retired', 'disposed', 'inactive'];

/** A company's reminder window (days) and time zone, from its `data`. */
export interface CompanySettings { readonly id: number; readonly window: number; readonly timeZone: string }

export function settingsOf(id: number, data: string | null): CompanySettings {
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

export interface DueWindow {
  /** The company's today: a next check before it is overdue. */
  readonly today: string;
  /** The last day that counts as due. */
  readonly soon: string;
}

/** The window of a company at `now`. */
export function windowAt(s: CompanySettings, now: Date): DueWindow {
  const today = todayIn(s.timeZone, now);
  return { today, soon: addDays(today, s.window) };
}
