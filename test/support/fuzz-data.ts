// Generators and oracle for the fuzz tests (test/http/fuzz.test.ts).
//
// A generated request is a `Plan`: method, version, endpoint, filter segments,
// certificate, Authorization and X-API-Result-Order header lines, Content-Type
// and body. Every part knows what it is by construction (a filter segment is
// valid, invalid or unknown; a body is malformed JSON, a JSON value whose every
// field is known, or raw bytes the model does not follow), and `expectPlan`
// works out, from the contract's order of checks (401 → 414 → 404 →
// 405 → session → 403 → 413 → 400 → 409), which answers the contract allows:
// code, message where it is determined, and whose session the envelope shows.
// Field names, types, writability and limits come from the resource
// definitions (src/resources/registry.ts); messages from src/errors.ts.
import fc from 'fast-check';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../src/auth/passwords.ts';
import { DEFAULT_LIMITS } from '../../src/engine/context.ts';
import {
  accessDenied, badSession, filterRequired, forbidden, invalidField, invalidFilter, invalidValue, malformedOrder, methodNotAllowed,
  noAccess, noEndpoint, noSession, noVersion, notFound, tooLarge, tooLong, tooMany,
} from '../../src/errors.ts';
import type { FieldDef, RelationDef, ResourceDef, Verb } from '../../src/model/types.ts';
import { RESOURCES } from '../../src/resources/registry.ts';
import { checkUrl } from '../../src/resources/webhooks.ts';
import { knownEvents, readEventList } from '../../src/events/names.ts';
import { createRegistry } from '../../src/resources/registry.ts';

export const DEFS: readonly ResourceDef[] = RESOURCES.map((r) => r.def);
const EVENTS = knownEvents(createRegistry());
export const defNamed = (name: string): ResourceDef | undefined => DEFS.find((d) => d.name === name);
const lookup = (name: string): ResourceDef => {
  const d = defNamed(name);
  if (!d) throw new Error(`no resource ${name}`);
  return d;
};

export const BODY_MAX = 1024 * 1024;
export const LIMITS = DEFAULT_LIMITS;
/** Node's limit on the request line and headers together (`--max-http-header-size`). */
const PARSER_HEAD_MAX = 16 * 1024;

// ---------------------------------------------------------------------------------------------
// The contract's error table.

export const CODE_STATUS: Readonly<Record<string, readonly number[]>> = {
  invalid_filter: [400], filter_required: [400], invalid_field: [400], invalid_value: [400], malformed_json: [400],
  malformed_order: [400], no_session: [400], too_many: [400], no_access: [401], bad_session: [401], bad_login: [401],
  forbidden: [403], no_endpoint: [404], no_version: [404], not_found: [404], method_not_allowed: [405], data_error: [409],
  too_large: [413], too_long: [414, 431], bad_file_type: [415], rate_limited: [429], internal: [500], storage: [503],
};

/** One answer the contract allows. `code` 'ok' is a success envelope (201 for PUT, else 200). */
export interface Allowed {
  readonly code: string;
  /** The exact message, or a test of it; absent: any message. */
  readonly message?: string | ((m: string) => boolean);
  /** The `{"response": …}` body of the HTTP parser's refusals, without `request`. */
  readonly bare?: boolean;
  /** Whose session `request.session` shows (set by `expectPlan`); undefined: not checked. */
  session?: 'admin' | 'readonly' | null;
  readonly why: string;
}

const allow = (code: string, why: string, message?: Allowed['message']): Allowed => ({ code, why, ...(message === undefined ? {} : { message }) });
const errorOf = (e: { code: string; message: string }, why: string): Allowed => allow(e.code, why, e.message);

export function describeAllowed(list: readonly Allowed[]): string {
  return list.map((a) => `${a.code}${typeof a.message === 'string' ? ` ${JSON.stringify(a.message)}` : a.message ? ' (message checked)' : ''}`
    + `${a.bare ? ' [bare]' : ''}${a.session !== undefined ? ` [session ${a.session}]` : ''} — ${a.why}`).join('\n    ');
}

// ---------------------------------------------------------------------------------------------
// JSON written exactly as generated: keys in order (duplicates kept), numbers as written.

const short = (s: string, n = 60) => (s.length > n ? `${JSON.stringify(s.slice(0, n))}…(${s.length} chars)` : JSON.stringify(s));

export class Num {
  constructor(readonly text: string) {}
  [fc.toStringMethod](): string { return `Num(${short(this.text)})`; }
}

export class Obj {
  constructor(readonly entries: readonly (readonly [string, JV])[]) {}
  [fc.toStringMethod](): string { return `Obj{${this.entries.map(([k, v]) => `${short(k)}: ${show(v)}`).join(', ')}}`; }
}

export type JV = null | boolean | string | Num | readonly JV[] | Obj;

/** A value for failure reports: long strings and arrays cut. */
export function show(v: JV): string {
  if (typeof v === 'string') return short(v);
  if (Array.isArray(v)) {
    const head = v.slice(0, 5).map(show).join(', ');
    return `[${head}${v.length > 5 ? `, …(${v.length} items)` : ''}]`;
  }
  if (v instanceof Num || v instanceof Obj) return v[fc.toStringMethod]();
  return JSON.stringify(v);
}

/** How a body is spelled: non-ASCII as \u escapes or not, whitespace between tokens. */
export interface Style { readonly escapeAll: boolean; readonly upper: boolean; readonly space: string }

function writeString(s: string, st: Style): string {
  // JSON.stringify writes a lone surrogate as a \udXXX escape, as escapeAll does.
  if (!st.escapeAll) return JSON.stringify(s);
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
      const hex = c.toString(16).padStart(4, '0');
      out += `\\u${st.upper ? hex.toUpperCase() : hex}`;
    } else {
      out += s[i];
    }
  }
  return `${out}"`;
}

export function writeJson(v: JV, st: Style): string {
  const sp = st.space;
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Num) return v.text;
  if (typeof v === 'string') return writeString(v, st);
  if (v instanceof Obj) return `{${sp}${v.entries.map(([k, x]) => `${writeString(k, st)}${sp}:${sp}${writeJson(x, st)}`).join(`${sp},${sp}`)}${sp}}`;
  return `[${sp}${v.map((x) => writeJson(x, st)).join(`${sp},${sp}`)}${sp}]`;
}

/** The entries of an object as a JSON reader keeps them: the last duplicate wins, at its own position. */
export function dedup(o: Obj): [string, JV][] {
  const m = new Map<string, JV>();
  for (const [k, v] of o.entries) {
    m.delete(k);
    m.set(k, v);
  }
  return [...m];
}

/** The canonical (minified) text of a value as stored. */
export function canonical(v: JV): string {
  if (v === null || typeof v === 'boolean' || v instanceof Num) return writeJson(v, { escapeAll: false, upper: false, space: '' });
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Obj) return `{${dedup(v).map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  return `[${v.map(canonical).join(',')}]`;
}

/** Nesting depth of the value as kept (0 for a scalar, 1 for a flat object or array). */
export function depthOf(v: JV): number {
  if (v instanceof Obj) return 1 + Math.max(0, ...dedup(v).map(([, x]) => depthOf(x)));
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  return 0;
}

/** Nesting depth of the text as read (discarded duplicates included). */
function textDepth(v: JV): number {
  if (v instanceof Obj) return 1 + Math.max(0, ...v.entries.map(([, x]) => textDepth(x)));
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(textDepth));
  return 0;
}

function hasNulKept(v: JV): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (v instanceof Obj) return dedup(v).some(([k, x]) => k.includes('\u0000') || hasNulKept(x));
  if (Array.isArray(v)) return v.some(hasNulKept);
  return false;
}

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A string or key anywhere in the text holds a lone surrogate (written as a \udXXX escape). */
function hasLoneSurrogate(v: JV): boolean {
  if (typeof v === 'string') return LONE.test(v);
  if (v instanceof Obj) return v.entries.some(([k, x]) => LONE.test(k) || hasLoneSurrogate(x));
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  return false;
}

/** A number beyond what a double holds (±Infinity, or a non-zero number that is 0 as a double). */
export function hasOutOfRangeNumber(v: JV): boolean {
  if (v instanceof Num) {
    const x = Number(v.text);
    return !Number.isFinite(x) || (x === 0 && /[1-9]/.test(v.text.split(/[eE]/)[0]!));
  }
  if (v instanceof Obj) return v.entries.some(([, x]) => hasOutOfRangeNumber(x));
  if (Array.isArray(v)) return v.some(hasOutOfRangeNumber);
  return false;
}

/** A JSON number text the reader keeps whole (it reads at most 400 characters of a number). */
function longNumber(v: JV): boolean {
  if (v instanceof Num) return v.text.length > 400;
  if (v instanceof Obj) return v.entries.some(([, x]) => longNumber(x));
  if (Array.isArray(v)) return v.some(longNumber);
  return false;
}

// ---------------------------------------------------------------------------------------------
// Field values: the model of what each field type takes.

const CANONICAL_INT = /^-?(0|[1-9][0-9]*)$/;

function intValue(v: JV): number | null {
  const text = v instanceof Num ? v.text : typeof v === 'string' ? v : null;
  if (text === null || !CANONICAL_INT.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export function isRealDate(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= (mo === 2 && leap ? 29 : DAYS[mo - 1]!);
}

export function isRealDatetime(s: string): boolean {
  const m = /^([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})$/.exec(s);
  return !!m && isRealDate(m[1]!) && Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4]) < 60;
}

const codePoints = (s: string) => [...s].length;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** What a file name may not hold: a slash, a backslash, a control character (below U+0020, and U+007F). */
export const forbiddenInFileName = (c: string): boolean => c === '/' || c === '\\' || c.charCodeAt(0) < 0x20 || c === '\u007f';

/** Whether a field takes the value (one body member). */
export function valueFits(f: FieldDef, v: JV): boolean {
  if (v === null) return !!f.nullable;
  switch (f.type) {
    case 'int': return intValue(v) !== null;
    case 'bool': {
      if (v === true || v === false) return true;
      const n = intValue(v);
      return n === 0 || n === 1;
    }
    case 'string': {
      if (typeof v !== 'string' || v.includes('\u0000')) return false;
      const max = f.maxLength ?? LIMITS.maxString;
      if (codePoints(v) > max) return false;
      if (f.required && v.trim() === '') return false;
      if (f.format === 'email') return EMAIL.test(v);
      if (f.format === 'filename') return ![...v].some(forbiddenInFileName);
      return true;
    }
    case 'date': return typeof v === 'string' && isRealDate(v);
    case 'datetime': return typeof v === 'string' && isRealDatetime(v);
    case 'json':
      if (f.objectOnly && !(v instanceof Obj)) return false;
      return depthOf(v) <= LIMITS.maxJsonDepth && !hasNulKept(v) && Buffer.byteLength(canonical(v)) <= LIMITS.maxJsonBytes;
  }
}

// ---------------------------------------------------------------------------------------------
// Names in filters and ordering: `field`, `<endpoint>.field`,
// `relation.field` (one-to-one relations) and JSON paths below any of them.

export type Kind = FieldDef['type'] | 'jsonpath';
const JSON_KEY = /^[A-Za-z0-9_$]+$/;

function relationFields(rel: RelationDef): readonly FieldDef[] {
  const target = lookup(rel.resource);
  return rel.fields ? rel.fields.map((n) => target.fields.find((f) => f.name === n)!) : target.fields;
}

function kindIn(fields: readonly FieldDef[], parts: readonly string[]): Kind | null {
  const f = fields.find((x) => x.name === parts[0]);
  if (!f) return null;
  if (parts.length === 1) return f.type;
  return f.type === 'json' && parts.slice(1).every((k) => JSON_KEY.test(k)) ? 'jsonpath' : null;
}

export function resolveKind(def: ResourceDef, name: string): Kind | null {
  const parts = name.split('.');
  if (parts.some((p) => p === '')) return null;
  if (parts.length > 1 && parts[0] === def.name && def.fields.some((f) => f.name === parts[1])) parts.shift();
  const own = kindIn(def.fields, parts);
  if (own) return own;
  const rel = def.relations.find((r) => r.name === parts[0]);
  if (!rel || rel.back || parts.length < 2) return null;
  return kindIn(relationFields(rel), parts.slice(1));
}

/**
 * Ordering also takes a bare name that exactly one embedded record has; never a field
 * of records linked through a table (a check's standards: filters only).
 */
export function resolvesForOrder(def: ResourceDef, name: string): boolean {
  if (resolveKind(def, name) !== null) return !def.relations.some((r) => r.through && name.split('.')[0] === r.name && !def.fields.some((f) => f.name === r.name));
  if (name.includes('.')) return false;
  return def.relations.filter((r) => !r.back && !r.through && relationFields(r).some((f) => f.name === name)).length === 1;
}

/** Every name an endpoint's filters take, with its kind (JSON paths below json fields are added by the generator). */
export function namesOf(def: ResourceDef): { name: string; kind: Kind }[] {
  const out: { name: string; kind: Kind }[] = [];
  for (const f of def.fields) {
    out.push({ name: f.name, kind: f.type }, { name: `${def.name}.${f.name}`, kind: f.type });
  }
  for (const rel of def.relations) {
    if (rel.back) continue;
    for (const f of relationFields(rel)) out.push({ name: `${rel.name}.${f.name}`, kind: f.type });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Filter segments.

export type Tag = 'valid' | 'invalid' | 'unknown';

export class Segment {
  constructor(
    /** Exactly as sent in the path (ASCII). */
    readonly text: string,
    readonly tag: Tag,
    /** A `page=N` segment that is well formed (its validity also depends on the verb and on repeats). */
    readonly page: boolean,
    readonly why: string,
  ) {}
  [fc.toStringMethod](): string { return `${short(this.text, 120)} (${this.tag}${this.page ? ', page' : ''}: ${this.why})`; }
}

type Op = '=' | '!' | '>' | '<' | '~' | '+' | '-';
/** Operator spellings and what they mean: `!=` is `!`, `>=` is `+` (≥), `<=` is `-` (≤), `+=` and `-=` as `+` and `-`. */
const SPELLINGS: readonly (readonly [string, Op])[] = [
  ['=', '='], ['!', '!'], ['>', '>'], ['<', '<'], ['~', '~'], ['+', '+'], ['-', '-'],
  ['!=', '!'], ['>=', '+'], ['<=', '-'], ['+=', '+'], ['-=', '-'],
];
/** Single-character operators that a raw `=` right after them would extend. */
const EXTENDABLE = new Set(['!', '+', '>', '-', '<']);

/** Whether a decoded value (null: `<NULL>`) types against a name's kind with the operator. */
export function filterValueFits(kind: Kind, op: Op, value: string | null): boolean {
  if (value === null) return op === '=' || op === '!';
  if (op === '~' || kind === 'json' || kind === 'jsonpath' || kind === 'string') return true;
  if (kind === 'int' || kind === 'bool') return /^-?[0-9]+$/.test(value) && Number.isSafeInteger(Number(value));
  if (kind === 'date') return isRealDate(value);
  return isRealDate(value) || isRealDatetime(value);
}

const RAW_SAFE = (c: number) => c >= 0x21 && c <= 0x7e && c !== 0x25 && c !== 0x2f && c !== 0x3f && c !== 0x2b;

export interface Encoding { readonly mode: 'min' | 'all' | 'mixed'; readonly upper: boolean; readonly seed: number; readonly plusForSpace: boolean }

/** Percent-encodes the UTF-8 bytes of a value so that it decodes back exactly; `escapeFirstEquals`: a leading `=` is escaped. */
export function encodeBytes(bytes: Uint8Array, e: Encoding, escapeFirstEquals: boolean): string {
  let out = '';
  let s = e.seed >>> 0;
  bytes.forEach((b, i) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const coin = (s >>> 16) & 1;
    const hex = `%${b.toString(16).padStart(2, '0')}`;
    const esc = e.upper ? hex.toUpperCase() : hex;
    if (b === 0x20) out += e.plusForSpace && e.mode !== 'all' ? '+' : esc;
    else if (i === 0 && escapeFirstEquals && b === 0x3d) out += esc;
    else if (RAW_SAFE(b) && (e.mode === 'min' || (e.mode === 'mixed' && coin === 1))) out += String.fromCharCode(b);
    else out += esc;
  });
  return out;
}

const encodeValue = (v: string, e: Encoding, escapeFirstEquals: boolean) => encodeBytes(Buffer.from(v, 'utf8'), e, escapeFirstEquals);

export const encodingArb: fc.Arbitrary<Encoding> = fc.record({
  mode: fc.constantFrom<Encoding['mode']>('min', 'min', 'all', 'mixed'), upper: fc.boolean(), seed: fc.nat(), plusForSpace: fc.boolean(),
});

const FILTER_CHARS = ['a', 'Z', '0', '9', '-', '_', '.', ' ', '+', '%', '/', '?', '#', '&', '=', '<', '>', '!', '~', '"', "'", '\\', 'é', 'ß',
  '🙂', '\u2028', '\ufeff', '\u00a0', '中', ':', ';', ',', '*', '(', ')', '[', ']', '{', '}', '|', '^', '`', '@', '$'];
const filterText = (max: number) => fc.string({ unit: fc.oneof(fc.constantFrom(...FILTER_CHARS), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })), maxLength: max })
  .filter((s) => !s.includes('\u0000') && !LONE.test(s));

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
export const goodDate = fc.oneof(
  fc.constantFrom('2024-02-29', '2000-02-29', '9999-12-31', '0001-01-01', '2026-01-31', '1970-01-01'),
  fc.tuple(fc.integer({ min: 1, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }))
    .map(([y, m, d]) => `${pad(y, 4)}-${pad(m)}-${pad(d)}`),
);
const badDate = fc.constantFrom('2023-02-29', '1900-02-29', '0000-01-01', '2023-13-01', '2023-00-10', '2023-1-01', '2023-01-32', '20230101',
  ' 2023-01-01', '2023-01-01 ', '2023/01/01', '１２３４-01-01', '10000-01-01', '2023-04-31', '', 'today', '2023-01-01T00:00:00');
const goodDatetime = fc.tuple(goodDate, fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }))
  .map(([d, h, m, s]) => `${d} ${pad(h)}:${pad(m)}:${pad(s)}`);
const badDatetime = fc.constantFrom('2023-01-01 24:00:00', '2023-01-01 10:60:00', '2023-01-01T10:00:00', '2023-01-01 10:00', '2023-02-30 00:00:00');
const intText = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.constantFrom('0', '-0', '007', '-007', '9007199254740991', '-9007199254740991', '00000000000000000000000001'),
);
const badIntText = fc.constantFrom('1.0', '1e3', '9007199254740992', '99999999999999999999', '0x10', '+1', '1 ', '--1', '', '١', 'NaN', 'Infinity', '1_000');

/** JSON number texts as a filter value (they compare as numbers with stored numbers). */
const jsonNumberText = fc.oneof(
  fc.integer({ min: -100, max: 100 }).map(String),
  fc.constantFrom('0', '-0', '1.5', '-2.25', '1e3', '1E+2', '2e-3', '1e308', '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '0.1'),
);

/** A value of the kind (for `~` any text); `<NULL>` is left to its own generator. */
const valueFor = (kind: Kind): fc.Arbitrary<string> => {
  switch (kind) {
    case 'int': case 'bool': return intText;
    case 'date': return goodDate;
    case 'datetime': return fc.oneof(goodDate, goodDatetime);
    case 'string': return fc.oneof(filterText(12), fc.constantFrom('1', '-0', 'x'));
    default: return fc.oneof(
      { weight: 3, arbitrary: jsonNumberText }, { weight: 2, arbitrary: filterText(12) },
      { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}', 'x', '1e400', '-1e-400') },
    );
  }
};
const anyValue: fc.Arbitrary<string> = fc.oneof(intText, badIntText, goodDate, badDate, goodDatetime, badDatetime, filterText(12));

/** JSON keys: mostly those the test's records use, so that paths find values. */
const jsonKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('k', 'n', 't', 'm', 'd', 'h', 'a', 'b', 'nested', 'floor', 'deep', 'fz', '0', '$k') },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_$]{1,6}$/) },
);

/** Names that resolve (own, prefixed, through a relation, JSON paths of random depth), with their kinds. */
function goodName(def: ResourceDef): fc.Arbitrary<{ name: string; kind: Kind }> {
  const names = namesOf(def);
  const jsonBases = names.filter((n) => n.kind === 'json');
  const plain = fc.constantFrom(...names);
  if (jsonBases.length === 0) return plain;
  const path = fc.tuple(fc.constantFrom(...jsonBases), fc.oneof({ weight: 6, arbitrary: fc.array(jsonKey, { minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.array(jsonKey, { minLength: 2, maxLength: 3 }) }, { weight: 1, arbitrary: fc.array(jsonKey, { minLength: 4, maxLength: 40 }) }))
    .map(([b, keys]) => ({ name: `${b.name}.${keys.join('.')}`, kind: 'jsonpath' as const }));
  return fc.oneof({ weight: 1, arbitrary: plain }, { weight: 1, arbitrary: path });
}

/** Names made of field characters, some near misses of real ones; their meaning is worked out by `resolveKind`. */
function anyName(def: ResourceDef): fc.Arbitrary<string> {
  const real = namesOf(def).map((n) => n.name);
  const twists = fc.tuple(fc.constantFrom(...real), fc.constantFrom('upper', 'dot', 'lead', 'x', 'double', 'key', 'files', 'other'))
    .map(([n, t]) => t === 'upper' ? n.toUpperCase() : t === 'dot' ? `${n}.` : t === 'lead' ? `.${n}` : t === 'x' ? `${n}x`
      : t === 'double' ? n.replace('.', '..') : t === 'key' ? `${n}.k` : t === 'files' ? `files.${n}` : `companies.${n}`);
  return fc.oneof(twists, fc.stringMatching(/^[A-Za-z0-9_$.]{1,12}$/), fc.constantFrom('$', '.', '_', 'data.', '.data', 'id.id', 'assets.files.id'))
    .filter((n) => n !== 'page');
}

const opSpelling = fc.constantFrom(...SPELLINGS);

function typedSegment(name: string, kind: Kind, spelling: readonly [string, Op], value: string, e: Encoding, why: string): Segment {
  const text = `${name}${spelling[0]}${encodeValue(value, e, spelling[0].length === 1 && EXTENDABLE.has(spelling[0]))}`;
  return new Segment(text, filterValueFits(kind, spelling[1], value) ? 'valid' : 'invalid', false, why);
}

const INVALID_UTF8 = ['ff', 'c3', 'c3 28', 'ed a0 80', 'ed bf bf', 'c0 af', 'e0 80 af', 'f4 90 80 80', 'f8 88 80 80 80', '80', 'e2 82', 'fe'];
const BAD_ESCAPES_END = ['%', '%1', '%g', '%G1', '%%', '%-1'];
const BAD_ESCAPES_MID = ['%G0', '%g', '%%', '%-1', '%zz', '%x4'];

/** Whether the endpoint has a JSON field or an embed with one (a delivery log has neither). */
const hasJson = (def: ResourceDef) => def.fields.some((f) => f.type === 'json') || def.relations.length > 0;

/** One filter segment for an endpoint; most are typed, the rest each break one rule. */
export function segmentArb(def: ResourceDef): fc.Arbitrary<Segment> {
  const good = goodName(def);
  const typedValid = fc.tuple(good, opSpelling, encodingArb).chain(([n, sp, e]) =>
    (sp[1] === '~' ? filterText(16) : valueFor(n.kind)).map((v) => typedSegment(n.name, n.kind, sp, v, e, `typed ${n.kind}`)));
  const jsonNumber = fc.tuple(good.filter((n) => n.kind === 'jsonpath' || n.kind === 'json'), opSpelling, jsonNumberText, encodingArb)
    .map(([n, sp, v, e]) => typedSegment(n.name, n.kind, sp, v, e, 'JSON path against a number'));
  const typedAny = fc.tuple(good, opSpelling, anyValue, encodingArb).map(([n, sp, v, e]) => typedSegment(n.name, n.kind, sp, v, e, `${n.kind}, any value`));
  const nullValue = fc.tuple(good, opSpelling, fc.constantFrom('<NULL>', '%3CNULL%3E', '%3cNULL%3e', '<null>', '<NULL>x'))
    .map(([n, sp, v]) => {
      const isNull = v !== '<null>' && v !== '<NULL>x';
      const fits = isNull ? filterValueFits(n.kind, sp[1], null) : filterValueFits(n.kind, sp[1], v);
      return new Segment(`${n.name}${sp[0]}${v}`, fits ? 'valid' : 'invalid', false, isNull ? '<NULL>' : 'not <NULL>');
    });
  const rawPlus = fc.tuple(good, opSpelling, fc.stringMatching(/^[-+0-9a-z]{1,8}$/)).map(([n, sp, raw]) => {
    const first = raw.startsWith('=') && sp[0].length === 1 && EXTENDABLE.has(sp[0]);
    return new Segment(`${n.name}${sp[0]}${raw}`, first ? 'unknown' : filterValueFits(n.kind, sp[1], raw.replace(/\+/g, ' ')) ? 'valid' : 'invalid', false, 'raw + is a space');
  });
  const named = fc.tuple(anyName(def), opSpelling, fc.stringMatching(/^[0-9a-z]{0,6}$/)).map(([name, sp, v]) => {
    const kind = resolveKind(def, name);
    return new Segment(`${name}${sp[0]}${v}`, kind === null ? 'invalid' : filterValueFits(kind, sp[1], v) ? 'valid' : 'invalid', false,
      kind === null ? 'name resolves to nothing' : `name of kind ${kind}`);
  });
  const badEscape = fc.tuple(typedValid, fc.boolean(), fc.constantFrom(...BAD_ESCAPES_END), fc.constantFrom(...BAD_ESCAPES_MID), fc.nat())
    .map(([s, end, tail, mid, at]) => {
      const opAt = s.text.search(/[=!<>~+-]/);
      const pos = opAt + 1 + (at % Math.max(1, s.text.length - opAt));
      const text = end ? s.text + tail : s.text.slice(0, pos) + mid + s.text.slice(pos);
      return new Segment(text, 'invalid', false, 'malformed percent escape');
    });
  const badUtf8 = fc.tuple(good, opSpelling, fc.constantFrom(...INVALID_UTF8), filterText(4), encodingArb).map(([n, sp, bad, pre, e]) => {
    const bytes = Buffer.concat([Buffer.from(pre, 'utf8'), Buffer.from(bad.replace(/ /g, ''), 'hex')]);
    return new Segment(`${n.name}${sp[0]}${encodeBytes(bytes, { ...e, mode: e.mode === 'min' ? 'mixed' : e.mode }, true)}`, 'invalid', false, 'invalid UTF-8');
  });
  const nul = fc.tuple(good, opSpelling, filterText(4)).map(([n, sp, v]) => new Segment(`${n.name}${sp[0]}${encodeValue(v, { mode: 'all', upper: false, seed: 0, plusForSpace: false }, false)}%00`, 'invalid', false, 'NUL'));
  const noOperator = fc.oneof(
    good.map((n) => new Segment(n.name, 'invalid', false, 'no operator')),
    fc.tuple(opSpelling, fc.stringMatching(/^[0-9a-z]{0,4}$/)).map(([sp, v]) => new Segment(`${sp[0]}${v}`, 'invalid', false, 'no field')),
    fc.tuple(good, fc.constantFrom('%3D', '%3d', '%21', '%7E')).map(([n, op]) => new Segment(`${n.name}${op}1`, 'unknown', false, 'escaped operator')),
  );
  const escapedName = fc.tuple(good, fc.nat()).map(([n, at]) => {
    const i = at % n.name.length;
    return new Segment(`${n.name.slice(0, i)}%${n.name.charCodeAt(i).toString(16)}${n.name.slice(i + 1)}=1`, 'unknown', false, 'escaped field name');
  });
  const page = fc.oneof(
    fc.constantFrom('1', '2', '007', '9007199254740991').map((v) => new Segment(`page=${v}`, 'valid', true, 'page')),
    fc.constantFrom('page=0', 'page=-1', 'page=1.5', 'page=abc', 'page=', 'page=<NULL>', 'page>1', 'page!=1', 'page~1', 'page=99999999999999999999',
      'page=1e3', 'page=+1', 'page=%2B1').map((t) => new Segment(t, 'invalid', false, 'malformed page')),
  );
  const garbage = fc.string({ unit: fc.constantFrom(...'abz09_.$=!<>~+-%#&;:,*()[]{}|^`@"\'\\'.split('')), minLength: 1, maxLength: 16 })
    .map((t) => new Segment(t, 'unknown', false, 'garbage'));
  // Bytes HTTP does not allow in a request target, sent raw (the parser refuses the request).
  const rawBytes = fc.tuple(good, opSpelling, fc.constantFrom('\u00e9', '\u00c3\u00a9', '\u00ff', '\u0080', '\u00ed\u00a0\u0080', '\u007f', '\u0001', '\t', ' '), fc.stringMatching(/^[a-z0-9]{0,4}$/))
    .map(([n, sp, raw, v]) => new Segment(`${n.name}${sp[0]}${v}${raw}${v}`, 'unknown', false, 'raw byte outside HTTP'));
  const longValue = fc.tuple(fc.constantFrom(...namesOf(def).filter((n) => n.kind === 'string' || n.kind === 'json')), fc.integer({ min: 900, max: 7000 }), fc.constantFrom('=', '~', '!'))
    .map(([n, len, op]) => new Segment(`${n.name}${op}${'v'.repeat(len)}`, 'valid', false, `value of ${len} characters`));
  return fc.oneof(
    { weight: 8, arbitrary: typedValid }, { weight: 4, arbitrary: typedAny },
    { weight: hasJson(def) ? 3 : 0, arbitrary: jsonNumber }, { weight: 2, arbitrary: nullValue },
    { weight: 1, arbitrary: rawPlus }, { weight: 3, arbitrary: named }, { weight: 1, arbitrary: badEscape },
    { weight: 1, arbitrary: badUtf8 }, { weight: 1, arbitrary: nul }, { weight: 1, arbitrary: noOperator },
    { weight: 1, arbitrary: escapedName }, { weight: 1, arbitrary: page }, { weight: 1, arbitrary: garbage },
    { weight: 1, arbitrary: longValue }, { weight: 1, arbitrary: rawBytes },
  );
}

/** A list of segments: a few, or around the limit of 32 conditions. */
export function segmentsArb(def: ResourceDef): fc.Arbitrary<Segment[]> {
  const one = segmentArb(def);
  const valid = one.filter((s) => s.tag === 'valid' && !s.page && s.text.length < 60);
  const anyValid = one.filter((s) => s.tag === 'valid');
  return fc.oneof(
    { weight: 5, arbitrary: fc.array(one, { maxLength: 5 }) },
    { weight: 5, arbitrary: fc.array(anyValid, { minLength: 1, maxLength: 6 }) },
    { weight: 1, arbitrary: fc.tuple(fc.array(valid, { minLength: 30, maxLength: 36 }), fc.array(one, { maxLength: 2 }), fc.nat())
      .map(([many, extra, at]) => { const out = [...many]; out.splice(at % (out.length + 1), 0, ...extra); return out; }) },
  // Node's parser takes spaces before the request line's version as separators: a path ending in spaces is read
  // without them, which is another request (the trimmed one, generated on its own).
  ).filter((list) => !/ $/.test(list.at(-1)?.text ?? ''));
}

interface SequenceResult {
  /** Index of the segment that is certainly refused first, when no unknown comes before it. */
  readonly invalidAt: number | null;
  /** Index of the first segment the model does not follow. */
  readonly unknownFrom: number | null;
  /** Conditions before the first refusal or unknown. */
  readonly conditions: number;
}

/** Walks the segments as the contract reads them: `page` (GET only, once) does not count towards the 32 conditions. */
export function sequence(segs: readonly Segment[], verb: string): SequenceResult {
  let conditions = 0;
  let paged = false;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    if (s.tag === 'unknown') return { invalidAt: null, unknownFrom: i, conditions };
    if (s.page) {
      if (verb !== 'GET' || paged) return { invalidAt: i, unknownFrom: null, conditions };
      paged = true;
      continue;
    }
    if (s.tag === 'invalid' || conditions === LIMITS.maxFilters) return { invalidAt: i, unknownFrom: null, conditions };
    conditions++;
  }
  return { invalidAt: null, unknownFrom: null, conditions };
}

// ---------------------------------------------------------------------------------------------
// Bodies.

export type BodyModel =
  /** Certainly refused as malformed JSON (no body, invalid UTF-8, not JSON). */
  | { readonly kind: 'malformed'; readonly why: string }
  /** JSON the model does not follow member by member. */
  | { readonly kind: 'unknown'; readonly why: string }
  /** A JSON value as generated; `alsoMalformed`: the text holds what a reader may refuse (lone surrogate escapes, a BOM). */
  | { readonly kind: 'value'; readonly value: JV; readonly alsoMalformed: string | null };

export class Body {
  constructor(readonly bytes: Buffer, readonly model: BodyModel, readonly note: string) {}
  [fc.toStringMethod](): string {
    const m = this.model;
    return `Body(${this.note}; ${this.bytes.length} bytes; ${m.kind === 'value' ? show(m.value) : `${m.kind}: ${m.why}`}${this.bytes.length <= 300 ? `; text ${JSON.stringify(this.bytes.toString('latin1'))}` : ''})`;
  }
}

export const styleArb: fc.Arbitrary<Style> = fc.record({ escapeAll: fc.boolean(), upper: fc.boolean(), space: fc.constantFrom('', '', ' ', '\n\t ') });

export function valueBody(v: JV, st: Style, note: string, extra?: { prefix?: Buffer; padTo?: number }): Body {
  let bytes = Buffer.from(writeJson(v, st), 'utf8');
  if (extra?.prefix) bytes = Buffer.concat([extra.prefix, bytes]);
  if (extra?.padTo !== undefined && extra.padTo > bytes.length) bytes = Buffer.concat([bytes, Buffer.alloc(extra.padTo - bytes.length, 0x20)]);
  const lone = hasLoneSurrogate(v) ? 'lone surrogate escape' : null;
  const bom = extra?.prefix ? 'byte order mark' : null;
  const big = longNumber(v) ? 'number over 400 characters' : null;
  const tooDeep = textDepth(v) > 256;
  if (tooDeep) return new Body(bytes, { kind: 'malformed', why: 'nested deeper than the reader reads' }, note);
  return new Body(bytes, { kind: 'value', value: v, alsoMalformed: lone ?? bom ?? big }, note);
}

/** Raw bytes: certainly malformed unless JSON.parse takes them (after UTF-8 decoding, which drops a leading BOM). */
export function rawBody(bytes: Buffer, note: string): Body {
  if (bytes.length === 0) return new Body(bytes, { kind: 'malformed', why: 'empty body' }, note);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new Body(bytes, { kind: 'malformed', why: 'invalid UTF-8' }, note);
  }
  try {
    JSON.parse(text);
  } catch {
    return new Body(bytes, { kind: 'malformed', why: 'not JSON' }, note);
  }
  return new Body(bytes, { kind: 'unknown', why: 'JSON the model does not follow' }, note);
}

const SPECIAL_CHARS = ['"', '\\', '/', '\u2028', '\u2029', '\u0001', '\u001f', '\u007f', '\u0085', '\b', '\f', '\n', '\r', '\t', ' ', '\u00a0',
  '\ufeff', '\u200b', '🙂', '𝄞', '\u{10ffff}', '\uffff', '\ufffe', 'é', 'ß', '%', '<', '&', '=', '+', 'A', 'z', '0', '@', '.'];
const charUnit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SPECIAL_CHARS) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
);
/** Characters no JSON text the service reads can carry: lone surrogates (written as \udXXX escapes) and NUL. */
const oddUnit = fc.constantFrom('\ud800', '\udfff', '\udbff', '\udc00', '\u0000');
/** A string with one odd character somewhere. */
const oddText = fc.tuple(fc.string({ unit: charUnit, maxLength: 6 }), oddUnit, fc.string({ unit: charUnit, maxLength: 6 })).map(([a, o, b]) => a + o + b);

/** `s` repeated to `n` code points. */
export function repeatTo(s: string, n: number): string {
  const cps = [...s];
  if (cps.length === 0) return '';
  let out = '';
  for (let i = 0; i < n; i++) out += cps[i % cps.length];
  return out;
}

export const textArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.string({ unit: charUnit, maxLength: 10 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 3 }), fc.constantFrom(999, 1000, 1001)).map(([s, n]) => repeatTo(s, n)) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ unit: charUnit, minLength: 1, maxLength: 3 }), fc.constantFrom(999, 1000, 1001)).map(([s, n]) => repeatTo(s, n)) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\t\n', '\u00a0', '\u3000') },
  { weight: 1, arbitrary: oddText },
);

const NUMBER_TEXTS = ['0', '-0', '1', '-1', '1.0', '1.50', '1e3', '1E3', '-1e-7', '2.5e+10', '1e400', '-1e400', '1e-400', '12345678901234567890',
  '9007199254740991', '9007199254740992', '-9007199254740991', '-9007199254740992', '0.1', '3.141592653589793238462643383279', '100'];
export const numArb: fc.Arbitrary<Num> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...NUMBER_TEXTS) },
  { weight: 3, arbitrary: fc.integer({ min: -100000, max: 100000 }).map(String) },
  { weight: 1, arbitrary: fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 20, max: 600 })).map(([neg, d, n]) => `${neg ? '-' : ''}${d}${'0'.repeat(n)}`) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 0, max: 99 }), fc.stringMatching(/^[0-9]{1,30}$/)).map(([a, b]) => `${a}.${b}`) },
).map((t) => new Num(t));

const KEYS = ['k', 'a', '10', '2', '0', '', ' ', 'é', '🙂', '"', '\\', '__proto__', 'constructor', 'api_assetqueue_manager_id', 'level',
  'can_create_companies', 'x.y', '$k', 'reminder_days', 'timezone'];
const keyArb = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...KEYS) }, { weight: 2, arbitrary: fc.string({ unit: charUnit, maxLength: 6 }) },
  { weight: 1, arbitrary: oddText });

const scalarArb: fc.Arbitrary<JV> = fc.oneof(fc.constant(null), fc.boolean(), textArb, numArb);

export const { value: jsonArb, object: objArb } = fc.letrec<{ value: JV; array: JV[]; object: Obj }>((tie) => ({
  value: fc.oneof({ maxDepth: 3, depthSize: 'small' }, scalarArb, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.array(fc.tuple(keyArb, tie('value')), { maxLength: 5 }).map((e) => new Obj(e)),
}));

/** Nested `depth` deep (0: a scalar), alternating objects and arrays. */
export function nested(depth: number): JV {
  let v: JV = new Num('1');
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : new Obj([['k', v]]);
  return v;
}

/** An object whose canonical text is `bytes` long (give or take the filler's width). */
export function sized(bytes: number, filler: string): Obj {
  const unit = Buffer.byteLength(JSON.stringify(filler)) - 2;
  const n = Math.max(0, Math.floor((bytes - 8) / unit));
  let s = filler.repeat(n);
  const rest = bytes - 8 - n * unit;
  s += 'x'.repeat(Math.max(0, rest));
  return new Obj([['s', s]]);
}

const jsonEdge: fc.Arbitrary<JV> = fc.oneof(
  fc.constantFrom(30, 31, 32, 33, 34).map((d) => nested(d)),
  fc.tuple(fc.integer({ min: -3, max: 3 }), fc.constantFrom('x', 'é', '\n', '\u0001', '🙂', '"')).map(([d, f]) => sized(LIMITS.maxJsonBytes + d, f)),
);

/** A value for a field: one it takes, or anything. */
export interface Pools { readonly ids: Readonly<Record<string, readonly number[]>>; readonly companies: readonly number[] }

function goodValue(f: FieldDef, pools: Pools): fc.Arbitrary<JV> {
  const ref = f.references ? pools.ids[f.references.resource] ?? [] : [];
  switch (f.type) {
    case 'int':
      if (f.references) {
        return fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...(f.references.resource === 'companies' ? pools.companies : ref.length ? ref : [1])).map((n) => new Num(String(n))) },
          { weight: 1, arbitrary: fc.integer({ min: 0, max: 100000 }).map((n) => new Num(String(n))) },
          { weight: 1, arbitrary: fc.constant(null) },
        );
      }
      return fc.oneof(fc.integer({ min: -1000, max: 1000 }).map((n) => new Num(String(n))), fc.integer({ min: 0, max: 99 }).map(String),
        fc.constantFrom(new Num('9007199254740991'), new Num('-9007199254740991'), new Num('-0'), '-0'));
    case 'bool': return fc.constantFrom<JV>(true, false, new Num('0'), new Num('1'), '0', '1');
    case 'date': return goodDate;
    case 'datetime': return goodDatetime;
    case 'string':
      if (f.format === 'email') return fc.tuple(fc.stringMatching(/^[a-z0-9.]{1,10}$/), fc.stringMatching(/^[a-z]{1,6}$/)).map(([a, b]) => `${a}@${b}.example`);
      if (f.name === 'messagetext') return fc.oneof(textArb, fc.tuple(fc.string({ unit: charUnit, minLength: 1, maxLength: 2 }), fc.constantFrom(9999, 10000, 10001)).map(([s, n]) => repeatTo(s, n)));
      if (f.name === 'username' || f.name === 'subdomain' || f.name === 'asset_no') return fc.tuple(textArb, fc.nat()).map(([s, n]) => `fz-${n}-${s}`);
      return textArb;
    case 'json':
      if (f.name === 'permissions') {
        return fc.oneof(fc.constant(null), fc.record({ level: fc.constantFrom<JV>('readonly', 'user', 'admin', null, 'root', new Num('1')) }).map((r) => new Obj([['level', r.level]])),
          fc.constantFrom<JV>(new Obj([['can_create_companies', true]]), new Obj([['can_create_companies', new Num('1')]]), new Obj([['other', true]])));
      }
      return fc.oneof({ weight: 6, arbitrary: objArb }, { weight: 2, arbitrary: jsonArb }, { weight: 1, arbitrary: jsonEdge });
  }
}

const wrongValue: fc.Arbitrary<JV> = fc.oneof(
  jsonArb, numArb, textArb, fc.constantFrom<JV>(true, false, null, [], new Obj([]), '12', ' 12', '1.0', '2', '2023-02-30', 'yes', '\u0000'),
);

/** One record for PUT (`create`) or POST (`update`): mostly fields of the definition, some unknown keys, some repeated. */
export function recordArb(def: ResourceDef, mode: 'create' | 'update', pools: Pools): fc.Arbitrary<Obj> {
  const writable = def.fields.filter((f) => f.writable === 'always' || f.writable === mode);
  const needed = mode === 'create' ? writable.filter((f) => f.required) : [];
  const member = (f: FieldDef) => fc.oneof({ weight: 8, arbitrary: goodValue(f, pools) }, { weight: 1, arbitrary: wrongValue }).map((v) => [f.name, v] as const);
  const anyField = fc.constantFrom(...def.fields).chain((f) => member(f));
  const writableField = writable.length ? fc.constantFrom(...writable).chain((f) => member(f)) : anyField;
  const unknown = fc.tuple(keyArb, wrongValue).map(([k, v]) => [k, v] as const);
  const goodMember = writable.length ? fc.constantFrom(...writable).chain((f) => goodValue(f, pools).map((v) => [f.name, v] as const)) : anyField;
  const good = fc.tuple(
    fc.tuple(...needed.map((f) => goodValue(f, pools).map((v) => [f.name, v] as const))),
    fc.array(fc.oneof({ weight: 3, arbitrary: goodMember }, { weight: 1, arbitrary: writableField }), { maxLength: 5 }),
  ).map(([req, more]) => new Obj([...req, ...more]));
  const noisy = fc.array(fc.oneof({ weight: 4, arbitrary: writableField }, { weight: 2, arbitrary: anyField }, { weight: 1, arbitrary: unknown }), { maxLength: 6 })
    .map((e) => new Obj(e));
  return fc.oneof({ weight: 5, arbitrary: good }, { weight: 2, arbitrary: noisy });
}

const JUNK = ['', ' ', '\n', 'null', 'true', '1', '"x"', '[]', '{}', '[1]', '[{}, 1]', '[null]', '{', '}', '{"a":}', "{'a':1}", 'NaN', 'Infinity', '-Infinity',
  '{"a":1,}', '[1,]', '01', '1.', '.5', '-', '+1', '{"a":1}x', '{"a":1} {"b":2}', '{"a":1}\n', '{"a" 1}', '{"a":1 "b":2}', '{"a":"\\x"}', '{"a":"\\u12"}',
  '{"a":"\\ud800"}', '{"a":"\\udc00\\ud800"}', '{"a":"\\ud83d\\ude42"}', '{"a":"\u0001"}', '/*c*/{}', '{"a":1}//', '\u0000', '{"a":\u00a0 1}',
  '{"description":"x"}', '[{"description":"x"}]', '{"__proto__":{"x":1}}', '{"a":tru}', '{"a":nul}', '{"a":-}', '{"a":1e}', '{"a":0x1}', '"\\ud800"'];
const JUNK_BYTES = ['ff', 'fe ff 00 7b 00 7d', 'ef bb bf 7b 7d', 'ef bb bf', '7b 22 61 22 3a 22 ed a0 80 22 7d', '7b 22 61 22 3a 22 c3 22 7d',
  '7b 22 61 22 3a 22 c0 af 22 7d', '00', '1f 8b 08 00', '7b 22 61 22 3a 22 f4 90 80 80 22 7d', 'ef bb bf ef bb bf 7b 7d'];

export const junkBodyArb: fc.Arbitrary<Body> = fc.oneof(
  fc.constantFrom(...JUNK).map((t) => rawBody(Buffer.from(t, 'utf8'), 'junk text')),
  fc.constantFrom(...JUNK_BYTES).map((h) => rawBody(Buffer.from(h.replace(/ /g, ''), 'hex'), 'junk bytes')),
  fc.uint8Array({ maxLength: 40 }).map((b) => rawBody(Buffer.from(b), 'random bytes')),
  fc.string({ unit: fc.constantFrom(...'{}[]":,0123456789.eE+-tfnrul \\'.split('')), maxLength: 30 }).map((t) => rawBody(Buffer.from(t), 'JSON-ish characters')),
);

/** A body for PUT or POST on a resource. */
export function resourceBodyArb(def: ResourceDef, verb: 'PUT' | 'POST', pools: Pools): fc.Arbitrary<Body> {
  const mode = verb === 'PUT' ? 'create' : 'update';
  const rec = recordArb(def, mode, pools);
  const object = fc.tuple(rec, styleArb).map(([o, st]) => valueBody(o, st, 'one record'));
  const array = fc.tuple(fc.array(rec, { minLength: 1, maxLength: 6 }), styleArb).map(([a, st]) => valueBody(a, st, 'records'));
  const shapes = fc.tuple(fc.oneof(scalarArb, fc.constantFrom<JV>([], [new Num('1')], [new Obj([]), new Num('1')], [null]), fc.array(rec, { minLength: 1, maxLength: 2 })), styleArb)
    .map(([v, st]) => valueBody(v, st, 'shape'));
  const bom = fc.tuple(rec, styleArb).map(([o, st]) => valueBody(o, st, 'BOM first', { prefix: Buffer.from([0xef, 0xbb, 0xbf]) }));
  // Around the limits: 1000 records, nesting of the reader, the body size.
  const many = fc.tuple(fc.constantFrom(999, 1000, 1001, 1002, 1500), fc.nat(), fc.boolean()).map(([n, at, bad]) => {
    const items: JV[] = Array.from({ length: n }, () => new Obj([]));
    // A record the definition refuses, so that no run inserts a thousand records.
    if (bad || n <= LIMITS.maxBatch) items[at % n] = new Obj([['no_such_field', new Num('1')]]);
    return valueBody(items, { escapeAll: false, upper: false, space: '' }, `${n} records`);
  });
  const deep = fc.tuple(fc.constantFrom(254, 255, 256, 257, 300), fc.boolean()).map(([d, inData]) =>
    valueBody(inData ? new Obj([['data', nested(d - 1)]]) : nested(d), { escapeAll: false, upper: false, space: '' }, `${d} deep`));
  const large = fc.tuple(fc.integer({ min: -3, max: 3 }), fc.constantFrom(0, 1, 100, BODY_MAX), fc.boolean()).map(([d, extra, objectFirst]) => {
    const target = BODY_MAX + d + (extra === BODY_MAX ? extra : 0);
    const record = new Obj([['description', 'x'.repeat(extra === 100 ? 100 : 1)]]);
    return valueBody(objectFirst ? record : [record], { escapeAll: false, upper: false, space: '' }, `${target} bytes`, { padTo: target });
  });
  return fc.oneof(
    { weight: 8, arbitrary: object }, { weight: verb === 'PUT' ? 4 : 1, arbitrary: array }, { weight: 2, arbitrary: shapes },
    { weight: 3, arbitrary: junkBodyArb }, { weight: 1, arbitrary: bom }, { weight: verb === 'PUT' ? 1 : 0, arbitrary: many },
    { weight: 1, arbitrary: deep }, { weight: 1, arbitrary: large },
  );
}

// ---------------------------------------------------------------------------------------------
// Requests.

export type CertChoice = 'basic' | 'imp' | 'unregistered' | 'none';
export type Who = 'admin' | 'readonly';

/** An Authorization header line: a session token in some spelling, or any other text. */
export class Auth {
  constructor(
    readonly kind: 'token' | 'raw',
    readonly who: Who | null,
    /** For tokens: how it is spelled. For raw: the value. */
    readonly variant: string,
  ) {}
  [fc.toStringMethod](): string { return this.kind === 'token' ? `Auth(${this.who} token, ${this.variant})` : `Auth(${JSON.stringify(this.variant)})`; }
}

/** Spellings of a real token: valid ones, ones that may be read either way, refused ones. */
const TOKEN_VARIANTS: Readonly<Record<string, 'valid' | 'either' | 'bad'>> = {
  exact: 'valid', lowerScheme: 'valid', upperScheme: 'valid', twoSpaces: 'valid', trailingSpace: 'valid', tab: 'either',
  pad1: 'either', pad2: 'either', pad3: 'bad', upperHex: 'bad', short: 'bad', long: 'bad', prefixCase: 'bad', noPrefix: 'bad', userPrefix: 'bad',
  bearer: 'bad', plainToken: 'bad', trailingJunk: 'bad', doubleColon: 'bad', noSpace: 'bad', urlsafe: 'either', lineWrapped: 'bad',
};

export function authHeader(a: Auth, tokens: Readonly<Record<Who, string>>): string {
  if (a.kind === 'raw') return a.variant;
  const token = tokens[a.who!];
  const b64 = (s: string) => Buffer.from(s, 'latin1').toString('base64');
  const std = b64(`session:${token}`);
  switch (a.variant) {
    case 'exact': return `Basic ${std}`;
    case 'lowerScheme': return `basic ${std}`;
    case 'upperScheme': return `BASIC ${std}`;
    case 'twoSpaces': return `Basic  ${std}`;
    case 'trailingSpace': return `Basic ${std}   `;
    case 'tab': return `Basic\t${std}`;
    case 'pad1': return `Basic ${std}=`;
    case 'pad2': return `Basic ${std}==`;
    case 'pad3': return `Basic ${std}===`;
    case 'upperHex': return `Basic ${b64(`session:${token.toUpperCase()}`)}`;
    case 'short': return `Basic ${b64(`session:${token.slice(0, 63)}`)}`;
    case 'long': return `Basic ${b64(`session:${token}0`)}`;
    case 'prefixCase': return `Basic ${b64(`Session:${token}`)}`;
    case 'noPrefix': return `Basic ${b64(token)}`;
    case 'userPrefix': return `Basic ${b64(`admin:${token}`)}`;
    case 'bearer': return `Bearer ${token}`;
    case 'plainToken': return token;
    case 'trailingJunk': return `Basic ${std} x`;
    case 'doubleColon': return `Basic ${b64(`session::${token}`)}`;
    case 'noSpace': return `Basic${std}`;
    case 'urlsafe': return `Basic ${std.replace(/\+/g, '-').replace(/\//g, '_')}`;
    case 'lineWrapped': return `Basic ${std.slice(0, 40)} ${std.slice(40)}`;
    default: throw new Error(`unknown token variant ${a.variant}`);
  }
}

const RAW_AUTH = ['', 'Basic', 'Basic ', 'Basic !!!', 'Basic abc=def', 'Basic ====', 'Basic =', 'Bearer x', 'Digest username="a"', 'session:abc',
  'Basic c2Vzc2lvbjo=', 'Basic c2Vzc2lvbg==', 'Basic ' + Buffer.from(`session:${'0'.repeat(64)}`).toString('base64'),
  'Basic ' + Buffer.from(`session:${'g'.repeat(64)}`).toString('base64'), 'Basic ' + Buffer.from('\u00ff\u00fe:x', 'latin1').toString('base64'),
  'Basic \u00ff', 'NTLM TlRMTVNTUAAB', 'Basic ' + 'QUFB'.repeat(2000)];
export const authArb: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom<Who>('admin', 'readonly'), fc.constantFrom(...Object.keys(TOKEN_VARIANTS))).map(([w, v]) => new Auth('token', w, v)) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_AUTH).map((v) => new Auth('raw', null, v)) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Basic ', 'basic ', 'Bearer ', ''), fc.stringMatching(/^[A-Za-z0-9+/=]{0,120}$/)).map(([s, v]) => new Auth('raw', null, s + v)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 80 }).map((b) => new Auth('raw', null, `Basic ${Buffer.from(b).toString('base64')}`)) },
  { weight: 1, arbitrary: fc.stringMatching(/^[\x20-\x7e]{0,40}$/).map((v) => new Auth('raw', null, v)) },
);

/** Node keeps leading and trailing spaces and tabs out of a header's value. */
const headerValue = (v: string) => v.replace(/^[ \t]+|[ \t]+$/g, '');

/** X-API-Result-Order header lines as sent. */
export class Order {
  constructor(readonly values: readonly string[]) {}
  [fc.toStringMethod](): string { return `Order(${this.values.map((v) => JSON.stringify(v)).join(', ')})`; }
  /** What the service reads: the values as Node keeps them, joined by commas. */
  joined(): string { return this.values.map(headerValue).join(','); }
}

/** The field an order name means, one spelling for each (`assets.id` is `id`; a bare relation field is `rel.field`). */
function orderFieldKey(def: ResourceDef, name: string): string {
  const own = name.startsWith(`${def.name}.`) ? name.slice(def.name.length + 1) : name;
  if (own.includes('.') || def.fields.some((f) => f.name === own)) return own;
  const rel = def.relations.find((r) => !r.back && !r.through && relationFields(r).some((f) => f.name === own));
  return rel ? `${rel.name}.${own}` : own;
}

/** Every term resolves, and they name at most 32 distinct fields (a field named again counts once). */
export function orderValid(def: ResourceDef, o: Order): boolean {
  const header = o.joined();
  if (header.trim() === '') return true;
  const names = header.split(',').map((part) => {
    const item = part.trim();
    return item.endsWith('^') ? item.slice(0, -1) : item;
  });
  return names.every((name) => resolvesForOrder(def, name)) && new Set(names.map((n) => orderFieldKey(def, n))).size <= 32;
}

export function orderArb(def: ResourceDef): fc.Arbitrary<Order> {
  const bare = [...new Set(DEFS.flatMap((d) => d.fields.map((f) => f.name)))];
  const name = fc.oneof(
    { weight: 12, arbitrary: goodName(def).map((n) => n.name) },
    { weight: 2, arbitrary: fc.constantFrom(...bare) },
    { weight: 1, arbitrary: anyName(def) },
    { weight: 1, arbitrary: fc.constantFrom('', '^', '^id', 'id^^', 'id ^', 'i d', 'id;', 'page', '*', 'ID', 'id\u00ff') },
  );
  const item = fc.tuple(name, fc.boolean(), fc.constantFrom('', '', ' ', '\t', '  ')).map(([n, desc, sp]) => `${sp}${n}${desc ? '^' : ''}${sp}`);
  const list = fc.oneof({ weight: 4, arbitrary: fc.array(item, { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.array(item, { minLength: 4, maxLength: 30 }) })
    .map((items) => items.join(','));
  // Thousands of terms naming a few fields (an ORDER BY SQLite would refuse, were they not counted once), or more than 32 fields.
  const repeated = fc.tuple(fc.array(goodName(def).map((n) => n.name), { minLength: 1, maxLength: 3 }), fc.integer({ min: 100, max: 2500 }))
    .map(([names, n]) => Array.from({ length: n }, (_, i) => names[i % names.length]!).join(','));
  const many = fc.array(goodName(def).map((n) => n.name), { minLength: 30, maxLength: 60 }).map((names) => names.join(','));
  return fc.oneof(
    { weight: 5, arbitrary: list.map((v) => new Order([v])) },
    { weight: 1, arbitrary: fc.oneof(repeated, many).map((v) => new Order([v])) },
    { weight: 1, arbitrary: fc.array(list, { minLength: 2, maxLength: 3 }).map((vs) => new Order(vs)) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', ',', ' , ', 'id,', ',id', 'id,,name').map((v) => new Order([v])) },
  );
}

export const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz', 'application/xml', '', ';;;', '*/*', 'application/json; charset=latin1', 'garbage', 'a/b/c; =;',
  'application/json\u00ff', 'x'.repeat(2000), 'application/octet-stream', 'image/png', 'text/html; charset="utf-8"'];
export const contentTypeArb = fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: null, freq: 3 });

/** How the request is framed: its Host line, an Expect line, the request line's HTTP version (`''`: none). */
export interface Protocol { readonly host: 'one' | 'none' | 'twice'; readonly expect: string | null; readonly version?: string }

/** Versions of the request line: the two the service reads, and ones Node's parser refuses or passes (2.0, 0.9). */
export const READ_VERSIONS = ['HTTP/1.1', 'HTTP/1.0'];
export const HTTP_VERSIONS = [...READ_VERSIONS, 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'HTTP/3.0', 'HTTP/9.9', 'http/1.1', 'HTTP/1.10',
  'HTTP/1', 'HTTP/11.1', '', 'HTTP/1.1 extra', 'HTTPS/1.1'];
export const PLAIN: Protocol = { host: 'one', expect: null };

export class Plan {
  constructor(
    readonly family: string,
    readonly method: string,
    readonly version: string,
    readonly endpoint: string,
    readonly segments: readonly Segment[],
    /** Appended after the path: a trailing slash and/or a query string, which change nothing. */
    readonly tail: string,
    readonly cert: CertChoice,
    readonly auth: readonly Auth[],
    readonly order: Order | null,
    readonly contentType: string | null,
    readonly body: Body | null,
    readonly protocol: Protocol = PLAIN,
  ) {}
  get path(): string { return `/${this.version}/${this.endpoint}${this.segments.map((s) => `/${s.text}`).join('')}`; }
  [fc.toStringMethod](): string {
    return `Plan[${this.family}] ${this.method} ${short(this.path, 400)}${this.tail} cert=${this.cert}`
      + `${this.auth.length ? ` auth=[${this.auth.map((a) => a[fc.toStringMethod]()).join(', ')}]` : ''}`
      + `${this.order ? ` ${this.order[fc.toStringMethod]()}` : ''}${this.contentType !== null ? ` content-type=${short(this.contentType)}` : ''}`
      + `${this.body ? ` ${this.body[fc.toStringMethod]()}` : ''}`
      + `${this.protocol !== PLAIN ? ` host=${this.protocol.host} expect=${JSON.stringify(this.protocol.expect)} version=${JSON.stringify(this.protocol.version ?? 'HTTP/1.1')}` : ''}\n  segments: ${this.segments.map((s) => s[fc.toStringMethod]()).join('\n            ')}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Endpoints: verbs and the least session level per verb.

type Need = 'readonly' | 'user' | 'admin' | 'creator';
interface EndpointMeta {
  readonly verbs: readonly Verb[];
  readonly need: Partial<Record<Verb, Need>>;
  readonly sessionless?: boolean;
  readonly streamsBody?: boolean;
}

const SPECIAL: Readonly<Record<string, EndpointMeta>> = {
  endpoints: { verbs: ['GET'], need: { GET: 'readonly' } },
  metadata: { verbs: ['GET'], need: { GET: 'readonly' } },
  randompassword: { verbs: ['GET'], need: { GET: 'readonly' } },
  logout: { verbs: ['GET'], need: { GET: 'readonly' } },
  login: { verbs: ['POST'], need: { POST: 'readonly' }, sessionless: true },
  password: { verbs: ['POST'], need: { POST: 'readonly' } },
  moveasset: { verbs: ['POST'], need: { POST: 'creator' } },
  upload: { verbs: ['GET', 'POST'], need: { GET: 'readonly', POST: 'user' }, streamsBody: true },
};

export const ENDPOINT_NAMES = [...DEFS.map((d) => d.name), ...Object.keys(SPECIAL)];

function metaOf(endpoint: string): EndpointMeta | null {
  const def = defNamed(endpoint);
  if (def) return { verbs: def.verbs, need: def.access };
  return SPECIAL[endpoint] ?? null;
}

const allows = (level: 'basic' | Who, need: Need) => level === 'basic' || level === 'admin' || need === 'readonly';
const NEED_TEXT: Readonly<Record<Need, string>> = { readonly: 'readonly', user: 'user', admin: 'admin', creator: 'admin with can_create_companies' };

/** What the test environment knows that the oracle needs. */
export interface Env {
  readonly unregisteredFingerprint: string;
  readonly tokens: Readonly<Record<Who, string>>;
}

// ---------------------------------------------------------------------------------------------
// The oracle.

type Level = 'basic' | Who;

/** The answers the contract allows for the plan (each tagged with the session the envelope must show). */
export function expectPlan(plan: Plan, env: Env, headBytes: number): Allowed[] {
  const out: Allowed[] = [];
  const bareTooLong = (why: string) => out.push({ code: 'too_long', bare: true, why });
  // Bytes HTTP does not allow in the request target: the parser's refusal (docs/api.md, Decisions and limits).
  const notHttp: Allowed | null = /[^\x21-\x7e]/.test(plan.path + plan.tail)
    ? { code: 'malformed_request', bare: true, why: 'a byte outside HTTP in the request target' } : null;
  // A method that is no token cannot be read, nor a request line of another HTTP version than 1.0 or 1.1;
  // a method too long for the first chunk the parser reads may not be read whole.
  const version = plan.protocol.version ?? 'HTTP/1.1';
  const unreadable = !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(plan.method) ? 'a method that is no token'
    : !READ_VERSIONS.includes(version) ? `the request line's version ${JSON.stringify(version)}` : null;
  const malformed: Allowed[] = [unreadable, plan.method.length > PARSER_HEAD_MAX / 2 ? 'a method of absurd length' : null]
    .filter((why) => why !== null).map((why) => ({ code: 'malformed_request', bare: true, why }));
  // The HTTP parser's limit on the request line and headers (whichever refusal it meets first).
  if (headBytes > PARSER_HEAD_MAX + 1000) {
    bareTooLong('request head over the parser limit');
    return [...out, ...(notHttp ? [notHttp] : []), ...malformed];
  }
  if (headBytes > PARSER_HEAD_MAX - 1000) bareTooLong('request head near the parser limit');
  if (notHttp) return [...out, notHttp];
  if (unreadable) return [...out, ...malformed];
  // A long method read whole still gets the pipeline's answer.
  out.push(...malformed);
  // Methods are case-sensitive: a served verb in another case is a verb the endpoint does not serve (405).
  const upper = plan.method.toUpperCase();
  // Without a Host line (HTTP/1.1 requires one) or with two, a refusal by the parser is fair; so is an answer.
  if (plan.protocol.host !== 'one') out.push({ code: 'malformed_request', bare: true, why: `Host line: ${plan.protocol.host}` });
  const tag = (list: Allowed[], session: Allowed['session']) => list.map((a) => ({ ...a, session: a.session === undefined ? session : a.session }));
  if (plan.cert === 'none' || plan.cert === 'unregistered') {
    out.push(...tag([errorOf(noAccess(plan.cert === 'none' ? 'none' : env.unregisteredFingerprint), 'no registered certificate')], null));
    return out;
  }
  if ((plan.path + plan.tail).split('?')[0]!.length > 8192) return [...out, ...tag([errorOf(tooLong(), 'path over 8192 characters')], null)];
  if (plan.version !== '3.0') return [...out, ...tag([errorOf(noVersion(plan.version), 'version')], null)];
  const meta = metaOf(plan.endpoint);
  if (!meta) return [...out, ...tag([errorOf(noEndpoint(plan.endpoint), 'endpoint')], null)];
  // HEAD is GET without the body.
  const verb = (upper === 'HEAD' ? 'GET' : upper) as Verb;
  if (plan.method !== upper || !meta.verbs.includes(verb)) {
    const allowed = meta.verbs.flatMap((v) => (v === 'GET' ? ['GET', 'HEAD'] : [v]));
    return [...out, ...tag([errorOf(methodNotAllowed(upper, plan.endpoint, allowed), 'verb')], null)];
  }
  // Sessions: Node keeps the first of repeated Authorization lines; refusing repeats is also fair.
  const readings: { level: Level; session: Who | null }[] = [];
  if (!meta.sessionless && plan.auth.length > 0) {
    if (plan.auth.length > 1) out.push(...tag([errorOf(badSession(), 'repeated Authorization')], null));
    const first = plan.auth[0]!;
    const spelling = first.kind === 'token' ? TOKEN_VARIANTS[first.variant]! : 'bad';
    if (spelling !== 'valid' || plan.cert !== 'imp') out.push(...tag([errorOf(badSession(), `Authorization ${first[fc.toStringMethod]()}`)], null));
    if (spelling !== 'bad' && plan.cert === 'imp') readings.push({ level: first.who!, session: first.who! });
  } else {
    readings.push({ level: 'basic', session: null });
  }
  for (const r of readings) {
    const need = meta.need[verb] ?? 'admin';
    if (plan.endpoint === 'login' && plan.cert !== 'imp') {
      out.push(...tag([errorOf(forbidden('Impersonation is not enabled for this certificate'), 'login needs an impersonation certificate')], null));
      continue;
    }
    if (!allows(r.level, need)) {
      out.push(...tag([errorOf(accessDenied(verb, plan.endpoint, NEED_TEXT[need]), `${r.level} session`)], r.session));
      continue;
    }
    if ((verb === 'POST' || verb === 'PUT') && !meta.streamsBody && plan.body && plan.body.bytes.length > BODY_MAX) {
      out.push(...tag([errorOf(tooLarge(BODY_MAX), 'body over 1 MiB')], r.session));
      continue;
    }
    out.push(...tag(endpointExpect(plan, verb, r.level), meta.sessionless ? null : r.session));
  }
  return out;
}

/** Filter outcomes: refusals of segments, and `then` for the conditions when none is refused. */
function filtered(segs: readonly Segment[], verb: string, then: (conditions: 'none' | 'some') => Allowed[]): Allowed[] {
  const s = sequence(segs, verb);
  const out: Allowed[] = [];
  if (s.invalidAt !== null) return [errorOf(invalidFilter(segs[s.invalidAt]!.text), `segment ${s.invalidAt} refused`)];
  if (s.unknownFrom !== null) {
    const texts = new Set(segs.slice(s.unknownFrom).map((x) => x.text));
    out.push(allow('invalid_filter', `a segment from ${s.unknownFrom} on`, (m) => [...texts].some((t) => m === invalidFilter(t).message)));
    out.push(...then('some'));
    if (s.conditions === 0) out.push(...then('none'));
    return out;
  }
  return then(s.conditions === 0 ? 'none' : 'some');
}

const firstSegmentRefused = (segs: readonly Segment[]) => [errorOf(invalidFilter(segs[0]!.text), 'this endpoint takes no filters')];

function endpointExpect(plan: Plan, verb: Verb, level: Level): Allowed[] {
  const segs = plan.segments;
  const def = defNamed(plan.endpoint);
  const body = plan.body?.model ?? { kind: 'malformed', why: 'no body' } as const;
  const session = level !== 'basic';
  switch (plan.endpoint) {
    case 'endpoints': case 'metadata': case 'randompassword':
      return segs.length ? firstSegmentRefused(segs) : [allow('ok', 'listing')];
    case 'logout':
      if (!session) return [errorOf(noSession(), 'logout without a session')];
      return segs.length ? firstSegmentRefused(segs) : [allow('ok', 'logout')];
    case 'upload': {
      const token = segs.map((s) => s.text).join('/');
      return [errorOf(notFound(`Upload ${token} does not exist`), 'no such upload')];
    }
    case 'login':
      return segs.length ? firstSegmentRefused(segs) : loginExpect(body);
    case 'moveasset':
      return segs.length ? firstSegmentRefused(segs) : bodyExpect(body, 'POST', (value) => moveExpect(value));
    case 'password':
      // Here the filter is required before the body is read.
      return filtered(segs, 'POST', (c) => (c === 'none' ? [errorOf(filterRequired('password', 'POST'), 'password needs a filter')]
        : bodyExpect(body, 'POST', (value) => passwordExpect(value))));
    default:
  }
  if (!def) throw new Error(`no model for ${plan.endpoint}`);
  switch (verb) {
    case 'GET':
      return filtered(segs, 'GET', () => {
        if (!plan.order) return [allow('ok', 'listing')];
        // Whether Node passes on empty lines among several is its own business: either reading.
        const kept = new Order(plan.order.values.filter((v) => headerValue(v) !== ''));
        const readings = [plan.order, ...(plan.order.values.length > 1 ? [kept] : [])];
        return readings.map((o) => (orderValid(def, o) ? allow('ok', 'listing with an order') : errorOf(malformedOrder(o.joined()), 'order header')));
      });
    case 'DELETE':
      return filtered(segs, 'DELETE', (c) => (c === 'none' ? [errorOf(filterRequired(def.name, 'DELETE'), 'DELETE needs a filter')]
        : [allow('ok', 'delete'), allow('data_error', 'references keep the records')]));
    case 'POST':
      return filtered(segs, 'POST', (c) => {
        const matchNothing = segs.length === 1 && segs[0]!.text === 'id=-1';
        const bodyStage = bodyExpect(body, 'POST', (value) => recordsExpect(def, 'update', value, session, matchNothing));
        if (c === 'some') return bodyStage;
        // The body is read (malformed_json) before the filter is required; its members after.
        const malformed = bodyStage.filter((a) => a.code === 'malformed_json');
        const readable = bodyStage.some((a) => a.code !== 'malformed_json');
        return [...malformed, ...(readable ? [errorOf(filterRequired(def.name, 'POST'), 'POST needs a filter')] : [])];
      });
    case 'PUT':
      if (segs.length) return firstSegmentRefused(segs);
      return bodyExpect(body, 'PUT', (value) => (def.name === 'auditlog' ? auditNoteExpect(value) : recordsExpect(def, 'create', value, session, false)));
  }
}

/** Malformed bodies; otherwise `then` of the value (with malformed_json too when the text may be refused). */
function bodyExpect(body: BodyModel, verb: 'POST' | 'PUT', then: (value: JV) => Allowed[]): Allowed[] {
  if (body.kind === 'malformed') return [allow('malformed_json', body.why)];
  if (body.kind === 'unknown') {
    return ['malformed_json', 'invalid_field', 'invalid_value', 'too_many', 'data_error', 'forbidden', 'ok', 'bad_login', 'rate_limited']
      .map((c) => allow(c, body.why));
  }
  const out: Allowed[] = body.alsoMalformed ? [allow('malformed_json', body.alsoMalformed)] : [];
  const v = body.value;
  if (verb === 'POST' && !(v instanceof Obj)) return [...out, allow('malformed_json', 'POST takes one object')];
  if (verb === 'PUT' && !(v instanceof Obj) && !(Array.isArray(v) && v.length > 0 && v.every((x) => x instanceof Obj))) {
    return [...out, allow('malformed_json', 'PUT takes an object or a non-empty array of objects')];
  }
  return [...out, ...then(v)];
}

interface RecordCheck { readonly error: Allowed | null }

/** The checks of one record that need no stored record: members in order, then the resource's own rules. */
function checkRecord(def: ResourceDef, mode: 'create' | 'update', o: Obj, session: boolean): RecordCheck {
  const entries = dedup(o);
  for (const [k, v] of entries) {
    const f = def.fields.find((x) => x.name === k);
    if (!f?.writable || (f.writable !== 'always' && f.writable !== mode)) return { error: errorOf(invalidField(k), `member ${JSON.stringify(k)} is not writable`) };
    if (!valueFits(f, v)) return { error: errorOf(invalidValue(k), `member ${JSON.stringify(k)}: ${show(v)} does not fit ${f.type}`) };
  }
  const get = (k: string) => entries.find(([x]) => x === k)?.[1];
  if (def.name === 'assetqueue') {
    if (get('released') !== undefined && session) return { error: errorOf(invalidField('released'), 'released by a session') };
    const released = get('released');
    if (get('asset_id') !== undefined && (released === undefined || intValue(released) !== 1)) {
      return { error: errorOf(invalidValue('asset_id'), 'asset_id without released=1') };
    }
  }
  if (def.name === 'users') {
    const p = get('permissions');
    if (p instanceof Obj) {
      const levels = ['readonly', 'user', 'admin'];
      const ok = dedup(p).every(([k, x]) => (k === 'level' ? x === null || (typeof x === 'string' && levels.includes(x)) : k === 'can_create_companies' ? typeof x === 'boolean' : false));
      if (!ok) return { error: errorOf(invalidValue('permissions'), 'permissions') };
    }
  }
  if (def.name === 'webhooks') {
    // an https URL without credentials; `events` ["*"] or known names without repeats.
    const url = get('url');
    if (typeof url === 'string' && !checkUrl(url)) return { error: errorOf(invalidValue('url'), 'url is no https URL') };
    const events = get('events');
    if (events !== undefined && readEventList(events, EVENTS) === null) return { error: errorOf(invalidValue('events'), 'events is no list of event names') };
  }
  if (def.name === 'companies') {
    const d = get('data');
    const m = d instanceof Obj ? dedup(d).find(([k]) => k === 'api_assetqueue_manager_id')?.[1] : undefined;
    if (m !== undefined && !(m instanceof Num && Number.isSafeInteger(Number(m.text)))) return { error: errorOf(invalidValue('data'), 'manager id is no integer') };
  }
  return { error: null };
}

/** Resource bodies: `too_many`, then each record's checks in order, then what depends on stored records. */
function recordsExpect(def: ResourceDef, mode: 'create' | 'update', value: JV, session: boolean, matchNothing: boolean): Allowed[] {
  const items = value instanceof Obj ? [value] : (value as Obj[]);
  if (items.length > LIMITS.maxBatch) return [errorOf(tooMany(items.length, LIMITS.maxBatch), 'over 1000 records')];
  for (const [i, o] of items.entries()) {
    const r = checkRecord(def, mode, o, session);
    if (r.error) return [{ ...r.error, why: `record ${i}: ${r.error.why}` }];
  }
  if (matchNothing) return [allow('ok', 'POST matching no record')];
  const fieldNames = new Set(def.fields.map((f) => f.name));
  return [
    allow('ok', 'written'),
    allow('invalid_value', 'a required field or a reference (stored records)', (m) => [...fieldNames].some((n) => m === invalidValue(n).message)),
    allow('data_error', 'state of stored records'),
    ...(session ? [allow('forbidden', 'a session granting or changing permissions')] : []),
    // Only the company's approving system may release queue entries (docs/api.md, Decisions and limits).
    ...(def.name === 'assetqueue' && mode === 'update' ? [errorOf(invalidField('released'), 'released by another certificate')] : []),
  ];
}

const auditNoteDef = () => lookup('auditlog');

function auditNoteExpect(value: JV): Allowed[] {
  const items = value instanceof Obj ? [value] : (value as Obj[]);
  if (items.length > LIMITS.maxBatch) return [errorOf(tooMany(items.length, LIMITS.maxBatch), 'over 1000 notes')];
  for (const o of items) {
    const r = checkRecord(auditNoteDef(), 'create', o, false);
    if (r.error) return [r.error];
  }
  if (items.some((o) => typeof dedup(o).find(([k]) => k === 'message')?.[1] !== 'string')) return [errorOf(invalidValue('message'), 'a note without a message')];
  return [allow('ok', 'note'), errorOf(invalidValue('asset_id'), 'asset of a note')];
}

function moveExpect(value: JV): Allowed[] {
  const o = value as Obj;
  const entries = dedup(o);
  for (const [k, v] of entries) {
    if (k !== 'asset_id' && k !== 'company_id') return [errorOf(invalidField(k), 'moveasset member')];
    if (intValue(v) === null) return [errorOf(invalidValue(k), 'moveasset id')];
  }
  for (const k of ['asset_id', 'company_id']) if (!entries.some(([x]) => x === k)) return [errorOf(invalidValue(k), `no ${k}`)];
  return [allow('ok', 'moved'), errorOf(invalidValue('asset_id'), 'no such asset'), errorOf(invalidValue('company_id'), 'no such company')];
}

function passwordExpect(value: JV): Allowed[] {
  const entries = dedup(value as Obj);
  const other = entries.find(([k]) => k !== 'new_password');
  if (other) return [errorOf(invalidField(other[0]), 'password member')];
  const p = entries.find(([k]) => k === 'new_password')?.[1];
  if (typeof p !== 'string' || codePoints(p) < PASSWORD_MIN || codePoints(p) > PASSWORD_MAX) return [errorOf(invalidValue('new_password'), 'new_password')];
  return [allow('ok', 'password set'), allow('forbidden', 'rights of the matched users')];
}

const LOGIN_FIELDS = ['username', 'password', 'ip', 'useragent'];

function loginExpect(body: BodyModel): Allowed[] {
  return bodyExpect(body, 'POST', (value) => {
    const entries = dedup(value as Obj);
    if (entries.some(([k]) => k === 'ikey')) return [errorOf(forbidden('Impersonation keys are not supported'), 'ikey')];
    for (const [k, v] of entries) {
      if (!LOGIN_FIELDS.includes(k)) return [errorOf(invalidField(k), 'login member')];
      // The published client sends `"ip": null, "useragent": null` when it has none.
      if (v === null && (k === 'ip' || k === 'useragent')) continue;
      if (typeof v !== 'string' || v.length > 1024) return [errorOf(invalidValue(k), 'login value')];
    }
    for (const k of ['username', 'password']) if (!entries.some(([x]) => x === k)) return [errorOf(invalidValue(k), `no ${k}`)];
    return [allow('ok', 'logged in'), allow('bad_login', 'wrong credentials'), allow('rate_limited', 'throttled')];
  });
}
