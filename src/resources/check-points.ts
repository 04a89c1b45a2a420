// A check's measurement points and their verdicts: guarded acceptance (ILAC G8), the
// guard band being the reading's expanded uncertainty U. A reading passes when it lies
// inside the limits by at least U, fails when it lies outside them by more than U, and
// is conditional in between; with U = 0 a reading on a limit passes. The arithmetic is
// exact, on the decimal numbers as the JSON wrote them (0.1 + 0.2 is 0.3 here).
import { invalidValue } from '../errors.ts';
import { JsonNumber, JsonObject, type JsonValue, parseJson } from '../model/json.ts';

export type Verdict = 'pass' | 'conditional' | 'fail';
export type CheckResult = 'pass' | 'adjusted' | 'conditional' | 'fail';
export const RESULTS: readonly CheckResult[] = ['pass', 'adjusted', 'conditional', 'fail'];

export const MAX_POINTS = 500;
const NAME_MAX = 200;
/** Decimal exponents beyond these are no finite double either way; bounding them bounds the arithmetic. */
const EXPONENT_MAX = 400;

const NUMBERS = ['nominal', 'lower_limit', 'upper_limit', 'as_found', 'as_left', 'uncertainty'] as const;
type NumberMember = (typeof NUMBERS)[number];
/** The verdicts a stored point shows: a point sent back as read (a CSV export imported again) may carry them, if they agree. */
const VERDICTS = ['found_verdict', 'left_verdict', 'verdict'] as const;
const MEMBERS = new Set<string>(['name', 'unit', ...NUMBERS, ...VERDICTS]);

/** m × 10^e, exactly. */
export interface Decimal { readonly m: bigint; readonly e: number }

/** A JSON number's text as an exact decimal; null when it is not a finite number of bounded size. */
export function decimalOf(text: string): Decimal | null {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match || !Number.isFinite(Number(text))) return null;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const e = Number(exponent) - fraction.length;
  if (!Number.isSafeInteger(e)) return null;
  const m = BigInt(`${sign}${whole}${fraction}`);
  if (m !== 0n && Math.abs(e + whole!.length + fraction.length) > EXPONENT_MAX) return null;
  return m === 0n ? { m, e: 0 } : { m, e };
}

const scaled = (d: Decimal, e: number) => d.m * 10n ** BigInt(d.e - e);

export function compare(a: Decimal, b: Decimal): number {
  const e = Math.min(a.e, b.e);
  const x = scaled(a, e);
  const y = scaled(b, e);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function add(a: Decimal, b: Decimal, sign: 1n | -1n = 1n): Decimal {
  const e = Math.min(a.e, b.e);
  return { m: scaled(a, e) + sign * scaled(b, e), e };
}

const ZERO: Decimal = { m: 0n, e: 0 };

/** The verdict of reading `x` against the limits (either may be missing) with expanded uncertainty `u`. */
export function verdictOf(x: Decimal, lower: Decimal | null, upper: Decimal | null, u: Decimal | null): Verdict {
  const band = u ?? ZERO;
  if ((lower && compare(x, add(lower, band, -1n)) < 0) || (upper && compare(x, add(upper, band)) > 0)) return 'fail';
  const inside = (!lower || compare(add(lower, band), x) <= 0) && (!upper || compare(x, add(upper, band, -1n)) <= 0);
  return inside ? 'pass' : 'conditional';
}

export interface Point {
  readonly name: string;
  readonly unit: string;
  /** Each number's text as written, or null. */
  readonly numbers: Readonly<Record<NumberMember, string | null>>;
  readonly found: Verdict | null;
  readonly left: Verdict | null;
  readonly verdict: Verdict;
}

const refuse = (): never => { throw invalidValue('points'); };

function readPoint(v: JsonValue): Point {
  if (!(v instanceof JsonObject)) return refuse();
  for (const key of v.entries.keys()) if (!MEMBERS.has(key)) refuse();
  const name = v.entries.get('name');
  const unit = v.entries.get('unit') ?? '';
  if (typeof name !== 'string' || name.length === 0 || [...name].length > NAME_MAX || name.includes('\u0000')) return refuse();
  if (typeof unit !== 'string' || [...unit].length > NAME_MAX || unit.includes('\u0000')) return refuse();
  const numbers = {} as Record<NumberMember, string | null>;
  const d = {} as Record<NumberMember, Decimal | null>;
  for (const key of NUMBERS) {
    const raw = v.entries.get(key) ?? null;
    if (raw === null) {
      numbers[key] = null;
      d[key] = null;
      continue;
    }
    if (!(raw instanceof JsonNumber)) return refuse();
    d[key] = decimalOf(raw.text) ?? refuse();
    numbers[key] = raw.text;
  }
  const { lower_limit: lower, upper_limit: upper, nominal, as_found: found, as_left: left, uncertainty: u } = d;
  if (!lower && !upper) refuse();
  if (lower && upper && compare(lower, upper) > 0) refuse();
  if (nominal && ((lower && compare(nominal, lower) < 0) || (upper && compare(nominal, upper) > 0))) refuse();
  if (!found && !left) refuse();
  if (u && compare(u, ZERO) < 0) refuse();
  const foundVerdict = found ? verdictOf(found, lower, upper, u) : null;
  const leftVerdict = left ? verdictOf(left, lower, upper, u) : null;
  const point: Point = { name, unit, numbers, found: foundVerdict, left: leftVerdict, verdict: (leftVerdict ?? foundVerdict)! };
  const shown = { found_verdict: point.found, left_verdict: point.left, verdict: point.verdict };
  for (const key of VERDICTS) if (v.entries.has(key) && v.entries.get(key) !== shown[key]) refuse();
  return point;
}

/** The points of a body's `points` (its canonical JSON text); throws 400 for `points` when they break a rule. */
export function readPoints(text: string): Point[] {
  const v = parseJson(text);
  if (!Array.isArray(v) || v.length > MAX_POINTS) return refuse();
  return v.map(readPoint);
}

/** The check's result from its points (none: null, the body must give one). */
export function resultOf(points: readonly Point[]): CheckResult | null {
  if (points.length === 0) return null;
  if (points.some((p) => p.verdict === 'fail')) return 'fail';
  if (points.some((p) => p.verdict === 'conditional')) return 'conditional';
  if (points.some((p) => p.found === 'fail' || p.found === 'conditional')) return 'adjusted';
  return 'pass';
}

const quote = (v: string | null) => (v === null ? 'null' : JSON.stringify(v));

/** The stored points: every member in order, numbers as written, and the verdicts. */
export function pointsJson(points: readonly Point[]): string {
  return `[${points.map((p) => `{"name":${quote(p.name)},"unit":${quote(p.unit)},${
    NUMBERS.map((k) => `${JSON.stringify(k)}:${p.numbers[k] ?? 'null'}`).join(',')
  },"found_verdict":${quote(p.found)},"left_verdict":${quote(p.left)},"verdict":${quote(p.verdict)}}`).join(',')}]`;
}
