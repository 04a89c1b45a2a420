// Filter segments are read from the raw request path, one segment at a time,
// or from the query string's `filter` values: one grammar for both,
// only the decoding before it differs. Pure: no SQL, no HTTP.
import { invalidFilter } from '../errors.ts';

export type Operator = '=' | '>' | '<' | '!' | '~' | '+' | '-';

export interface FilterSegment {
  /** The segment exactly as sent: every error message quotes it. */
  readonly raw: string;
  readonly field: string;
  readonly op: Operator;
  /** Decoded value; null for `<NULL>`. */
  readonly value: string | null;
}

const OPERATORS = new Set<number>([...'=><!~+-'].map((c) => c.charCodeAt(0)));
/** Operators that take a raw `=` as a second character: `!=`, `+=`, `>=`, `-=`, `<=`. */
const ALIASED = new Set<number>([...'!+>-<'].map((c) => c.charCodeAt(0)));
const TWO_CHARACTER: Partial<Record<Operator, Operator>> = { '>': '+', '<': '-' };
const EQUALS = 0x3d;
const PLUS = 0x2b;

interface Unit { readonly byte: number; readonly escaped: boolean }

function units(raw: string): Unit[] | null {
  const out: Unit[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x25) {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return null;
      out.push({ byte: parseInt(hex, 16), escaped: true });
      i += 2;
    } else if (c < 0x100) {
      out.push({ byte: c, escaped: false });
    } else {
      for (const b of Buffer.from(raw[i] ?? '', 'utf8')) out.push({ byte: b, escaped: false });
    }
  }
  return out;
}

const isFieldByte = (b: number) =>
  (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x5f || b === 0x24 || b === 0x2e;

// A leading U+FEFF is part of the value, not a byte-order mark to drop.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A segment of ASCII without a percent-escape: each character is its own byte (the common case, read directly). */
// eslint-disable-next-line no-control-regex -- a plain value is any ASCII after NUL but '%'
const PLAIN = /^([A-Za-z0-9_$.]+)([=><!~+-])(=?)([\x01-\x24\x26-\x7f]*)$/;

/** Splits one raw path segment into field, operator and value, or throws `invalid_filter`. */
export function parseSegment(raw: string): FilterSegment {
  const plain = PLAIN.exec(raw);
  if (plain) {
    const [, field, first, equals, rest] = plain as unknown as [string, string, Operator, string, string];
    const aliased = equals !== '' && ALIASED.has(first.charCodeAt(0));
    const op = aliased ? TWO_CHARACTER[first] ?? first : first;
    const value = `${aliased ? '' : equals}${rest}`.replaceAll('+', ' ');
    return { raw, field, op, value: value === '<NULL>' ? null : value };
  }
  const u = units(raw);
  if (!u) throw invalidFilter(raw);
  return readUnits(raw, u, true);
}

/**
 * Decodes a query-string value once, by the query string's rules (`+` and `%20` are spaces, `%2B` a plus);
 * a bad percent-escape, invalid UTF-8 or nothing at all throws `invalid_filter` quoting the value as sent.
 */
export function decodeQueryValue(sent: string): string {
  const u = units(sent);
  if (!u || u.length === 0) throw invalidFilter(sent);
  try {
    return utf8.decode(Uint8Array.from(u.map((x) => (x.byte === PLUS && !x.escaped ? 0x20 : x.byte))));
  } catch {
    throw invalidFilter(sent);
  }
}

/**
 * Reads one `filter` value of the query string (as sent): decoded once, then split by the same grammar as a path
 * segment with its value taken literally (no second decoding, a `+` is a plus). Errors quote the decoded text.
 */
export function parseQuerySegment(sent: string): FilterSegment {
  const text = decodeQueryValue(sent);
  const literal = [...Buffer.from(text, 'utf8')].map((byte): Unit => ({ byte, escaped: false }));
  return readUnits(text, literal, false);
}

/** The grammar: field bytes, an operator (with its raw-`=` alias), then the value; `raw` is what errors quote. */
function readUnits(raw: string, u: readonly Unit[], plusIsSpace: boolean): FilterSegment {
  let i = 0;
  while (i < u.length && isFieldByte(u[i]!.byte)) i++;
  const opUnit = u[i];
  if (i === 0 || !opUnit || !OPERATORS.has(opUnit.byte)) throw invalidFilter(raw);
  const field = String.fromCharCode(...u.slice(0, i).map((x) => x.byte));
  let op = String.fromCharCode(opUnit.byte) as Operator;
  i++;
  const next = u[i];
  if (ALIASED.has(opUnit.byte) && next && next.byte === EQUALS && !next.escaped) {
    i++;
    op = TWO_CHARACTER[op] ?? op;
  }
  const bytes = u.slice(i).map((x) => (plusIsSpace && x.byte === PLUS && !x.escaped ? 0x20 : x.byte));
  let value: string;
  try {
    value = utf8.decode(Uint8Array.from(bytes));
  } catch {
    throw invalidFilter(raw);
  }
  // No engine stores a NUL character, and SQLite's LIKE would stop at one.
  if (value.includes('\u0000')) throw invalidFilter(raw);
  return { raw, field, op, value: value === '<NULL>' ? null : value };
}
