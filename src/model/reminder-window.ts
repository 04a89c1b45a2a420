// A company's reminder window and time zone (from its `data`): which assets are due
// (next check on or before today + the window, today in its time zone), for the
// reminder run, the portal and the e-mails alike.
import { validZone } from './dates.ts';
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

