// Dates are `YYYY-MM-DD` and datetimes `YYYY-MM-DD HH:MM:SS`, always UTC.

/** The number the ASCII digits of s[from, to) write, or -1 when one is not a digit. */
function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** s starts with a real calendar date in `YYYY-MM-DD` form (read character by character: a PUT checks thousands). */
function startsWithDate(s: string): boolean {
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false;
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 7);
  const d = digits(s, 8, 10);
  return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo);
}

/** A real calendar date in `YYYY-MM-DD` form. */
export const isDate = (s: string): boolean => s.length === 10 && startsWithDate(s);

/** A real date and time in `YYYY-MM-DD HH:MM:SS` form. */
export function isDatetime(s: string): boolean {
  if (s.length !== 19 || s.charCodeAt(10) !== 32 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || !startsWithDate(s)) return false;
  const h = digits(s, 11, 13);
  const m = digits(s, 14, 16);
  const sec = digits(s, 17, 19);
  return h >= 0 && h < 24 && m >= 0 && m < 60 && sec >= 0 && sec < 60;
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

/** A formatter per time zone: making one costs more than a request's other date work together. */
const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** Today's date in a time zone. */
export function todayIn(timeZone: string, now: Date): string {
  let format = dayFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    // Only zones the runtime knows get this far (a formatter of an unknown one throws); spellings vary in case, so bounded.
    if (dayFormats.size >= 1000) dayFormats.clear();
    dayFormats.set(timeZone, format);
  }
  return format.format(now);
}

export interface Clock { now(): Date }
export const systemClock: Clock = { now: () => new Date() };
