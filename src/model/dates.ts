// Dates are `YYYY-MM-DD` and datetimes `YYYY-MM-DD HH:MM:SS`, always UTC.

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** A real calendar date in `YYYY-MM-DD` form. */
export function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo);
}

export function isDatetime(s: string): boolean {
  const m = DATETIME.exec(s);
  return !!m && isDate(m[1]!) && Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4]) < 60;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

export function formatDate(t: Date): string {
  return `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
}

export function formatDatetime(t: Date): string {
  return `${formatDate(t)} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
}

const parseDate = (s: string) => new Date(`${s}T00:00:00Z`);

export function addDays(date: string, days: number): string {
  const t = parseDate(date);
  t.setUTCDate(t.getUTCDate() + days);
  return formatDate(t);
}

/** Months since year 0 of the first and last month a date can have (years 0001–9999). */
export const MONTHS_MIN = 12;
export const MONTHS_MAX = 9999 * 12 + 11;

/**
 * `date` plus whole months, the day clamped to the target month's end (Jan 31 + 1
 * → Feb 28/29); null when that leaves the years 0001–9999.
 */
export function addMonths(date: string, months: number): string | null {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const target = year * 12 + month - 1 + months;
  if (!Number.isSafeInteger(target) || target < MONTHS_MIN || target > MONTHS_MAX) return null;
  const y = Math.floor(target / 12);
  const m = (target % 12) + 1;
  return `${pad(y, 4)}-${pad(m)}-${pad(Math.min(day, daysInMonth(y, m)))}`;
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

export function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The injectable source of "now" (tests move it; the server uses the system clock). */
/** Whether `zone` is a time zone this runtime knows (an IANA name such as Europe/Berlin). */
export function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Today's date in a time zone. */
export function todayIn(timeZone: string, now: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

export interface Clock { now(): Date }
export const systemClock: Clock = { now: () => new Date() };
