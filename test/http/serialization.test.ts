// GET responses are written as JSON by the database itself. These properties show,
// on both engines, that every such response is byte for byte what a plain
// serializer in JS makes of the raw rows (test/support/reference-json.ts): random
// records are created through the API (strings with quotes, backslashes, control
// characters, U+2028, astral characters, up to the 1000-character limit; dynamic
// JSON with keys in random order, integer-like keys, numbers as written), then a
// random filter, order and page is read back as a random certificate, and the
// `response` member's text is compared with the reference built from the ids it
// holds. Which ids, in which order, and `pagination` are checked against the raw
// rows filtered and sorted in JS. PROPERTY_RUNS sets the runs per property (25).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { TestClient, TestResponse } from '../support/client.ts';
import { forbiddenInFileName } from '../support/fuzz-data.ts';
import { DB_KINDS, type DbKind, type Service, startService } from '../support/harness.ts';
import { cellText, type RawRow, ReferenceSerializer, type ResourceName, SPECS } from '../support/reference-json.ts';
import { Api, makeUser } from '../support/sessions.ts';
import { stop } from './resources-support.ts';
import type { Inserted } from '../support/api.ts';

const RUNS = (() => {
  const n = Number(process.env.PROPERTY_RUNS ?? '25');
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`PROPERTY_RUNS must be a positive integer, not ${process.env.PROPERTY_RUNS}`);
  return n;
})();

/** Small pages, so that random filters often span several. */
const PAGE_SIZE = 7;

// ---------------------------------------------------------------------------
// JSON written exactly as generated: keys in order, numbers as written.

class Num {
  constructor(readonly text: string) {}
  [fc.toStringMethod]() { return `num(${this.text})`; }
}

class Obj {
  constructor(readonly entries: readonly (readonly [string, JV])[]) {}
  [fc.toStringMethod]() { return `obj(${this.entries.map(([k, v]) => `${JSON.stringify(k)}: ${fc.stringify(v)}`).join(', ')})`; }
}

type JV = null | boolean | string | Num | readonly JV[] | Obj;

/** The canonical (minified) text the service stores for a value. */
function canonical(v: JV): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Num) return v.text;
  if (v instanceof Obj) return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  return `[${v.map(canonical).join(',')}]`;
}

/** How a request body is spelled: every non-ASCII character as \uXXXX or not, whitespace between tokens. */
interface Style { readonly escapeAll: boolean; readonly upper: boolean; readonly space: string }

function writeString(s: string, st: Style): string {
  if (!st.escapeAll) return JSON.stringify(s);
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c || c === 0x2f) {
      const hex = c.toString(16).padStart(4, '0');
      out += `\\u${st.upper ? hex.toUpperCase() : hex}`;
    } else {
      out += s[i];
    }
  }
  return `${out}"`;
}

function written(v: JV, st: Style): string {
  const sp = st.space;
  if (v === null || typeof v === 'boolean' || v instanceof Num) return canonical(v);
  if (typeof v === 'string') return writeString(v, st);
  if (v instanceof Obj) {
    return `{${sp}${v.entries.map(([k, x]) => `${writeString(k, st)}${sp}:${sp}${written(x, st)}`).join(`${sp},${sp}`)}${sp}}`;
  }
  return `[${sp}${v.map((x) => written(x, st)).join(`${sp},${sp}`)}${sp}]`;
}

// ---------------------------------------------------------------------------
// Arbitraries.

const SPECIAL = ['"', '\\', '/', '\u2028', '\u2029', '\u0001', '\u001f', '\u007f', '\u0085', '\b', '\f', '\n', '\r', '\t', ' ', '\u00a0',
  '\ufeff', '\u200b', '🙂', '👩‍🔬', '𝄞', '\u{10ffff}', '\uffff', '\ufffe', 'é', 'e\u0301', 'Ä', 'ß', '%', '_', "'", '<', '>', '&', '=', '+',
  '?', '#', 'A', 'z', '0'];

const unit = fc.oneof(
  fc.constantFrom(...SPECIAL),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '\u0000'),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
);

/** `s` repeated to exactly `n` code points. */
function repeatTo(s: string, n: number): string {
  const cps = [...s];
  let out = '';
  for (let i = 0; i < n; i++) out += cps[i % cps.length];
  return out;
}

const shortText = fc.string({ unit, maxLength: 12 });
const longText = (min: number, max: number) =>
  fc.tuple(fc.string({ unit, minLength: 1, maxLength: 6 }), fc.integer({ min, max })).map(([s, n]) => repeatTo(s, n));
/** Any string the API takes (no NUL), up to the 1000-character limit. */
const text = fc.oneof({ weight: 12, arbitrary: shortText }, { weight: 1, arbitrary: longText(990, 1000) }, { weight: 1, arbitrary: longText(50, 400) });
const filename = text.map((s) => [...s].map((c) => (forbiddenInFileName(c) ? '_' : c)).join(''));
const emailPart = shortText.map((s) => s.replace(/[\s@]/g, ''));
const email = fc.tuple(emailPart, emailPart).map(([a, b]) => `${a || 'u'}@${b || 'd'}.example`);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** The next day, or the previous one at the end of the calendar. */
const otherDay = (d: string) => {
  const t = new Date(`${d}T00:00:00Z`);
  t.setUTCDate(t.getUTCDate() + (d === '9999-12-31' ? -1 : 1));
  return `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
};
const date = fc.oneof(
  fc.constantFrom('2024-02-29', '2000-02-29', '9999-12-31', '0001-01-01', '0050-06-15', '0100-01-01', '2025-01-01'),
  fc.tuple(fc.oneof(fc.integer({ min: 2015, max: 2035 }), fc.integer({ min: 1, max: 9999 })), fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 28 })).map(([y, m, d]) => `${pad(y, 4)}-${pad(m)}-${pad(d)}`),
);

const NUMBERS = ['0', '-0', '1.50', '1e3', '1E3', '-1e-7', '2.5e+10', '12345678901234567890', '-123456789012345678901234567890', '0.1',
  '1e400', '9007199254740993', '100', '1.0', '-0.0', '3.141592653589793238462643383279', '10', '2'];
const numberText = fc.oneof(
  fc.constantFrom(...NUMBERS),
  fc.tuple(fc.boolean(), fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String)),
    fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined }),
    fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 400 })), { nil: undefined }))
    .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}${exp === undefined ? '' : exp.join('')}`),
);

/** Values of `data.k` the filters look for. */
const WORDS = ['x', 'y', 'xy', 'true'] as const;
const KEYS = ['k', '10', '2', '1', '0', '01', '-1', '1.5', 'a', 'B', '', ' ', 'é', '🙂', '\u2028', '"', '\\', 'k.v', '__proto__', 'constructor'];
const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: shortText });

const scalar: fc.Arbitrary<JV> = fc.oneof(
  fc.constant(null), fc.boolean(), shortText, fc.constantFrom<JV>(...WORDS), numberText.map((t) => new Num(t)),
);

const { value: jsonValue, object: jsonObject } = fc.letrec<{ value: JV; array: JV[]; object: Obj }>((tie) => ({
  value: fc.oneof({ maxDepth: 3, depthSize: 'small' }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.uniqueArray(fc.tuple(key, tie('value')), { maxLength: 5, selector: (e) => e[0] }).map((e) => new Obj(e)),
}));

/** An object that often has the key `k` (at a random position), for `data.k` filters. */
const objectWithK: fc.Arbitrary<Obj> = fc.tuple(jsonObject, fc.option(fc.oneof(fc.constantFrom<JV>(...WORDS), scalar)), fc.nat())
  .map(([o, k, at]) => {
    if (k === null || o.entries.some(([name]) => name === 'k')) return o;
    const entries = [...o.entries];
    entries.splice(at % (entries.length + 1), 0, ['k', k]);
    return new Obj(entries);
  });

/** `data`: left out, or any JSON (mostly an object). */
const data: fc.Arbitrary<JV | undefined> = fc.oneof(
  { weight: 5, arbitrary: objectWithK }, { weight: 2, arbitrary: jsonValue }, { weight: 1, arbitrary: fc.constant(undefined) },
);

const omit = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** Left out, null, or a value. */
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(fc.constant(undefined), fc.constant(null), a);
const flag = fc.oneof(fc.boolean(), fc.constantFrom(0, 1));
const period = fc.oneof(fc.integer({ min: -30, max: 120 }), fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0));

const style: fc.Arbitrary<Style> = fc.record({ escapeAll: fc.boolean(), upper: fc.boolean(), space: fc.constantFrom('', ' ', '\n\t ') });

/** Companies records are written to: A and its child C and grandchild D (the callers' scopes), S outside them. */
type Home = 'A' | 'C' | 'D' | 'S';
const home = fc.constantFrom<Home>('A', 'A', 'C', 'D', 'S');
/**
 * Who reads: the certificates of P (everything), A (A, C, D …) and C (C, D …), and
 * A's admin in a session (A's tree; not for messages, which a session sees by other rules).
 */
type Caller = 'P' | 'A' | 'C' | 'session';

// ---------------------------------------------------------------------------
// Random filters, order and page, resolved against the rows at hand.

type FilterKind = 'int' | 'string' | 'date' | 'json';
interface FilterField { readonly name: string; readonly kind: FilterKind; readonly nullable?: boolean }

const int = (name: string, nullable = false): FilterField => ({ name, kind: 'int', nullable });
const str = (name: string, nullable = false): FilterField => ({ name, kind: 'string', nullable });
const day = (name: string, nullable = false): FilterField => ({ name, kind: 'date', nullable });
const DATA_K: FilterField = { name: 'data.k', kind: 'json' };

const FILTERS: Readonly<Record<ResourceName, readonly FilterField[]>> = {
  assets: [int('id'), int('company_id'), str('asset_no'), str('serial_no'), str('description'), str('status'), day('next_check', true),
    day('last_check', true), int('period', true), int('location_id', true), int('external_type_id', true), DATA_K],
  companies: [int('id'), str('name'), str('logo', true), str('subdomain', true), int('parent_id', true), DATA_K],
  locations: [int('id'), int('company_id'), str('description'), DATA_K],
  departments: [int('id'), int('company_id'), str('description'), DATA_K],
  externaltypes: [int('id'), int('external_itemtype_id', true), int('company_id'), str('description'), DATA_K],
  users: [int('id'), str('username'), str('email'), str('first_name'), str('last_name'), int('company_id'), int('reminders'),
    int('email_confirmed'), day('password_last_changed', true), DATA_K],
  messages: [int('id'), int('sender_user_id', true), int('target_user_id', true), int('company_id'), str('messagetext'),
    day('date_range_start', true), day('date_range_end', true), DATA_K],
  files: [int('id'), int('asset_id'), int('company_id'), str('description'), str('filename'), day('filedate'), str('mimetype', true),
    int('size', true), str('upload_uuid', true), DATA_K],
  assetreminders: [int('id'), int('company_id'), int('asset_id'), int('user_id', true), day('due_date'), day('remind_date'), str('message'),
    int('sent'), int('acknowledged'), DATA_K],
  assetqueue: [int('id'), int('company_id'), str('asset_no'), str('description'), str('manufacturer'), day('next_date', true),
    int('period', true), int('released'), int('asset_id', true), str('status'), DATA_K],
  auditlog: [int('id'), int('asset_id', true), int('company_id'), int('user_id', true), int('file_id', true), int('record_id', true),
    str('endpoint'), str('action'), str('message'), str('ip', true), int('client_id', true)],
};

const OPS: Readonly<Record<FilterKind, readonly string[]>> = {
  int: ['=', '>', '<', '!', '+', '-'],
  string: ['~', '=', '!', '<', '>', '~'],
  date: ['=', '<', '>', '+', '-', '!'],
  json: ['=', '!'],
};

interface CondGen {
  readonly field: number; readonly op: number; readonly pick: number; readonly delta: number; readonly needle: string;
  readonly date: string; readonly word: string; readonly useNull: boolean; readonly fromRow: boolean;
}
interface QueryGen {
  readonly caller: Caller;
  readonly conds: readonly CondGen[];
  readonly page: number | null;
  readonly order: readonly { readonly field: number; readonly desc: boolean }[];
}

const condGen: fc.Arbitrary<CondGen> = fc.record({
  field: fc.nat(), op: fc.nat(), pick: fc.nat(), delta: fc.integer({ min: -1, max: 1 }), needle: fc.string({ unit, maxLength: 3 }),
  date, word: fc.constantFrom(...WORDS), useNull: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  fromRow: fc.boolean(),
});
const queryBy = (...callers: Caller[]): fc.Arbitrary<QueryGen> => fc.record({
  caller: fc.constantFrom(...callers),
  conds: fc.array(condGen, { maxLength: 2 }),
  page: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
  order: fc.array(fc.record({ field: fc.nat(), desc: fc.boolean() }), { maxLength: 2 }),
});
const queryGen = queryBy('P', 'A', 'A', 'C', 'session');

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const bytes = (s: string) => Buffer.from(s, 'utf8');
/** Integers numerically, text by its UTF-8 bytes (as both engines compare it). */
const compareValues = (kind: FilterKind, a: unknown, b: unknown) =>
  (kind === 'int' ? Math.sign(Number(a) - Number(b)) : Buffer.compare(bytes(String(a)), bytes(String(b))));
const truncate = (s: string, n: number) => [...s].slice(0, n).join('');
/** A filter value in a path: percent-encoded, `=` too (a raw `=` after `!`, `>`, `<`, `+`, `-` would change the operator). */
const encodeValue = (v: string) => encodeURIComponent(v).replace(/=/g, '%3D');

interface Resolved {
  readonly segments: readonly string[];
  readonly preds: readonly ((r: RawRow) => boolean)[];
  readonly order: readonly { readonly field: FilterField; readonly desc: boolean }[];
  readonly header: string | undefined;
  readonly page: number;
}

/** `data.k` as the filters see it: a value of the stored object, or undefined when missing. */
function dataK(r: RawRow): unknown {
  if (typeof r.data !== 'string') return undefined;
  const v: unknown = JSON.parse(r.data);
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, 'k') ? (v as Record<string, unknown>).k : undefined;
}

function resolveCondition(f: FilterField, c: CondGen, rows: readonly RawRow[]): { segment: string; pred: (r: RawRow) => boolean } {
  if (f.kind === 'json') {
    const missing = (r: RawRow) => { const v = dataK(r); return v === undefined || v === null; };
    if (c.useNull) {
      return c.op % 2 === 0 ? { segment: `${f.name}=<NULL>`, pred: missing } : { segment: `${f.name}!<NULL>`, pred: (r) => !missing(r) };
    }
    const equal = (r: RawRow) => { const v = dataK(r); return (typeof v === 'string' || typeof v === 'boolean') && String(v) === c.word; };
    if (c.op % 2 === 0) return { segment: `${f.name}=${c.word}`, pred: equal };
    return { segment: `${f.name}!${c.word}`, pred: (r) => missing(r) || (typeof dataK(r) !== 'object' && !equal(r)) };
  }
  if (c.useNull && f.nullable) {
    const isNull = (r: RawRow) => r[f.name] === null;
    return c.op % 2 === 0 ? { segment: `${f.name}=<NULL>`, pred: isNull } : { segment: `${f.name}!<NULL>`, pred: (r) => !isNull(r) };
  }
  const ops = OPS[f.kind];
  const op = ops[c.op % ops.length]!;
  const present = rows.map((r) => r[f.name]).filter((v) => v !== null && v !== undefined);
  let value: string;
  if (f.kind === 'int') {
    const candidates = present.length > 0 ? present.map(Number) : [1];
    const n = candidates[c.pick % candidates.length]!;
    // Filters take safe integers only.
    value = String(Number.isSafeInteger(n + c.delta) ? n + c.delta : n);
  } else if (f.kind === 'date') {
    value = c.fromRow && present.length > 0 ? cellText(present[c.pick % present.length]) : c.date;
  } else {
    const from = c.fromRow && present.length > 0 ? cellText(present[c.pick % present.length]) : null;
    if (from === null) value = c.needle;
    else if (op === '~') {
      const cps = [...from];
      const start = c.pick % (cps.length + 1);
      value = cps.slice(start, start + 1 + (c.pick % 3)).join('');
    } else value = truncate(from, 200);
    if (value === '<NULL>') value = '<NULL>?';
  }
  const pred = (r: RawRow) => {
    const x = r[f.name];
    if (x === null || x === undefined) return op === '!';
    if (op === '~') return asciiLower(cellText(x)).includes(asciiLower(value));
    const d = compareValues(f.kind, x, value);
    return op === '=' ? d === 0 : op === '!' ? d !== 0 : op === '>' ? d > 0 : op === '<' ? d < 0 : op === '+' ? d >= 0 : d <= 0;
  };
  return { segment: `${f.name}${op}${encodeValue(value)}`, pred };
}

function resolveQuery(resource: ResourceName, q: QueryGen, rows: readonly RawRow[]): Resolved {
  const fields = FILTERS[resource];
  const conditions = q.conds.map((c) => resolveCondition(fields[c.field % fields.length]!, c, rows));
  const orderable = fields.filter((f) => f.kind !== 'json');
  const order: { field: FilterField; desc: boolean }[] = [];
  for (const o of q.order) {
    const field = orderable[o.field % orderable.length]!;
    if (!order.some((t) => t.field === field)) order.push({ field, desc: o.desc });
  }
  const segments = conditions.map((c) => c.segment);
  if (q.page !== null) segments.push(`page=${q.page}`);
  const header = order.length > 0 ? order.map((t) => `${t.field.name}${t.desc ? '^' : ''}`).join(',') : undefined;
  return { segments, preds: conditions.map((c) => c.pred), order, header, page: q.page ?? 1 };
}

/** ORDER BY as specified: NULL lowest (first ascending, last descending), then id ascending unless ordered by id. */
function comparator(order: Resolved['order']): (a: RawRow, b: RawRow) => number {
  return (a, b) => {
    for (const { field, desc } of order) {
      const x = a[field.name];
      const y = b[field.name];
      const d = x === null && y === null ? 0 : x === null ? -1 : y === null ? 1 : compareValues(field.kind, x, y);
      if (d !== 0) return desc ? -d : d;
    }
    return order.some((t) => t.field.name === 'id') ? 0 : Number(a.id) - Number(b.id);
  };
}

// ---------------------------------------------------------------------------
// The world: a company tree, certificates, a session, and the reference.

interface World {
  readonly kind: DbKind;
  readonly svc: Service;
  readonly ref: ReferenceSerializer;
  /** P tops the tree; A and S are its children; C is A's child and D is C's. */
  readonly co: Readonly<Record<'P' | Home, number>>;
  readonly readers: Readonly<Record<'P' | 'A' | 'C', TestClient>>;
  /** P's certificate (basic mode): writes anywhere. */
  readonly writer: TestClient;
  /** An admin of A, logged in through A's impersonation certificate: its writes carry its user id. */
  readonly session: Api;
  readonly sessionUser: number;
}

let tagCounter = 0;
/** A string made unique (usernames, subdomains, asset numbers) and non-blank, within the 1000-character limit. */
const tagged = (s: string) => truncate(`#${++tagCounter}~${s}`, 1000);

type Entries = [string, JV | undefined][];
const num = (n: number) => new Num(String(n));
const body = (entries: Entries) => new Obj(entries.filter((e): e is [string, JV] => e[1] !== undefined));
const asJson = (v: number | boolean | null | undefined): JV | undefined => (typeof v === 'number' ? num(v) : v);

async function rowOf(w: World, table: string, id: number): Promise<RawRow> {
  const { rows } = await sql<RawRow>`SELECT * FROM ${sql.table(table)} WHERE id = ${id}`.execute(w.svc.database.db);
  if (!rows[0]) throw new Error(`${table} ${id} was not stored`);
  return rows[0];
}

/** Ids of a table's records in a company (or all), in id order. */
async function idsOf(w: World, table: string, companyId?: number): Promise<number[]> {
  const where = companyId === undefined ? sql`` : sql`WHERE company_id = ${companyId}`;
  const { rows } = await sql<{ id: unknown }>`SELECT id FROM ${sql.table(table)} ${where} ORDER BY id`.execute(w.svc.database.db);
  return rows.map((r) => Number(r.id));
}

const pick = (ids: readonly number[], n: number | null | undefined): JV | undefined =>
  (n === undefined ? undefined : n === null ? null : ids.length === 0 ? undefined : num(ids[n % ids.length]!));

const JSON_COLUMNS = new Set(['data', 'styles', 'permissions']);

/**
 * PUTs one record written in `st` and checks that the row holds exactly what was
 * sent: strings as sent, dynamic JSON as its canonical text (keys in the order written).
 */
async function put(w: World, client: TestClient | Api, resource: ResourceName, record: Obj, st: Style): Promise<number> {
  const payload = written(record, st);
  const res: TestResponse = client instanceof Api ? await client.put(resource, payload) : await client.put(`/3.0/${resource}`, payload);
  if (res.status !== 201) throw new Error(`${w.kind}: PUT /3.0/${resource} ${payload} answered ${res.status}: ${res.text}`);
  const id = Number(res.reply<Inserted>().ids[0]);
  const row = await rowOf(w, SPECS[resource].table, id);
  for (const [k, v] of record.entries) {
    if (k === 'message_read') continue;
    const want = JSON_COLUMNS.has(k) ? (v === null ? null : canonical(v))
      : v === null || typeof v === 'string' ? v : v instanceof Num ? Number(v.text) : typeof v === 'boolean' ? Number(v) : undefined;
    if (want !== undefined) assert.equal(row[k], want, `${w.kind}: ${resource} ${id}: ${k} as stored (sent ${payload})`);
  }
  return id;
}

async function post(w: World, path: string, payload: unknown): Promise<void> {
  const res = await w.writer.post(`/3.0/${path}`, payload);
  if (res.status !== 200) throw new Error(`${w.kind}: POST /3.0/${path} ${JSON.stringify(payload)} answered ${res.status}: ${res.text}`);
}

/** The `response` member's text, sliced out of the body (it is the envelope's last member). */
function responseText(body: string, where: string): string {
  const marker = ',"response":';
  const at = body.indexOf(marker);
  if (at < 0 || !body.endsWith('}')) throw new Error(`${where}: no response member in ${body}`);
  return body.slice(at + marker.length, -1);
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function mismatch(where: string, got: string, want: string): Error {
  const at = firstDifference(got, want);
  const around = (s: string) => JSON.stringify(s.slice(Math.max(0, at - 120), at + 120));
  return new Error(`${where}: the response differs from the reference at character ${at}\n`
    + `  service:   ${around(got)}\n  reference: ${around(want)}\n`
    + `--- service response (${got.length} characters) ---\n${got}\n--- reference (${want.length} characters) ---\n${want}\n---`);
}

/**
 * GETs a resource with a random filter, order and page as a random certificate, and
 * checks the `response` text against the reference, and which records, in which
 * order, and how many against the raw rows.
 */
async function checkGet(w: World, resource: ResourceName, q: QueryGen): Promise<void> {
  const root = w.co[q.caller === 'session' ? 'A' : q.caller];
  const scope = await w.ref.scope(root);
  const spec = SPECS[resource];
  const scoped = (await w.ref.all(resource)).filter((r) => scope.has(Number(r[spec.scope])));
  const rq = resolveQuery(resource, q, scoped);
  const path = `/3.0/${resource}${rq.segments.map((s) => `/${s}`).join('')}`;
  const where = `${w.kind}: GET ${path}${rq.header ? ` (X-API-Result-Order: ${rq.header})` : ''} by ${q.caller === 'session' ? 'a session of an admin of A' : `the certificate of ${q.caller}`} (company ${root})`;
  const o = rq.header ? { headers: { 'X-API-Result-Order': rq.header } } : undefined;
  const res = q.caller === 'session' ? await w.session.get(path.slice('/3.0/'.length), o) : await w.readers[q.caller].get(path, o);
  if (res.status !== 200) throw new Error(`${where}: answered ${res.status}: ${res.text}`);
  const got = responseText(res.text, where);
  let records: { id: number }[];
  try {
    records = JSON.parse(got) as { id: number }[];
  } catch (e) {
    throw new Error(`${where}: the response is not JSON (${String(e)}): ${got}`);
  }
  const ids = records.map((r) => r.id);
  const want = await w.ref.response(resource, ids, { root });
  if (got !== want) throw mismatch(where, got, want);
  const matching = scoped.filter((r) => rq.preds.every((p) => p(r))).sort(comparator(rq.order));
  const expected = matching.slice((rq.page - 1) * PAGE_SIZE, rq.page * PAGE_SIZE).map((r) => Number(r.id));
  assert.deepEqual(ids, expected, `${where}: the ids of the page`);
  assert.deepEqual(res.envelope.pagination, { total_pages: Math.ceil(matching.length / PAGE_SIZE), total_records: matching.length },
    `${where}: pagination`);
}

/** A property over random writes followed by one random GET, `RUNS` times. */
function property<T>(w: () => World, arb: fc.Arbitrary<T>, run: (w: World, input: T) => Promise<void>): Promise<void> {
  return fc.assert(fc.asyncProperty(arb, fc.integer({ min: 0, max: 3 }), async (input, seconds) => {
    const world = w();
    world.svc.clock.advance(seconds * 1000);
    await run(world, input);
  }), { numRuns: RUNS, includeErrorInReport: true });
}

/** A tiny PNG: uploads give files an upload_uuid, a mimetype and a size. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

async function upload(w: World, fileId: number, extra: string): Promise<void> {
  const token = String((await rowOf(w, 'files', fileId)).token);
  const res = await w.writer.post(`/3.0/upload/${token}`, Buffer.concat([PNG, Buffer.from(extra)]));
  if (res.status !== 200) throw new Error(`${w.kind}: upload to file ${fileId} answered ${res.status}: ${res.text}`);
}

async function setUp(kind: DbKind): Promise<World> {
  const svc = await startService(kind, { limits: { pageSize: PAGE_SIZE } });
  svc.clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
  const P = await svc.company('Top "P" \\ \u2028');
  const A = await svc.company('A 🙂', P);
  const S = await svc.company('Sibling S', P);
  const C = await svc.company('C\tchild', A);
  const D = await svc.company('D grandchild', C);
  const writer = (await svc.certificate(P)).client;
  const readers = { P: writer, A: (await svc.certificate(A)).client, C: (await svc.certificate(C)).client };
  const admin = await makeUser(svc, A, { level: 'admin' });
  const session = await new Api(svc, (await svc.certificate(A, { impersonation: true })).client).session(admin);
  const w: World = { kind, svc, ref: new ReferenceSerializer(svc.database.db, svc.baseUrl), co: { P, A, S, C, D }, readers, writer, session, sessionUser: admin.id };
  // Something to refer to from the first run on, in every company that is written to.
  const plain: Style = { escapeAll: false, upper: false, space: '' };
  for (const h of ['A', 'C', 'D', 'S'] as const) {
    const company = num(w.co[h]);
    for (const table of ['locations', 'departments'] as const) {
      await put(w, writer, table, body([['company_id', company], ['description', `${table} of ${h}`]]), plain);
    }
    await put(w, writer, 'externaltypes', body([['company_id', company], ['description', `type of ${h}`]]), plain);
    await put(w, writer, 'users', body([['company_id', company], ['username', tagged(h)], ['email', `${h}@example.com`]]), plain);
    const asset = await put(w, writer, 'assets', body([['company_id', company], ['asset_no', tagged(h)]]), plain);
    const file = await put(w, writer, 'files', body([['asset_id', num(asset)], ['description', 'uploaded']]), plain);
    await upload(w, file, h);
  }
  return w;
}

// ---------------------------------------------------------------------------

for (const kind of DB_KINDS) {
  describe(`GET responses are byte for byte the reference serializer's (${kind})`, () => {
    let world: World;
    const w = () => world;

    before(async () => { world = await setUp(kind); });
    after(() => stop(world?.svc));

    it('the reference writes a known asset and company exactly as hand-written text, and so does the service', async () => {
      const { co, writer } = world;
      const plain: Style = { escapeAll: false, upper: false, space: '' };
      const loc = await put(world, writer, 'locations', body([['company_id', num(co.C)], ['description', 'Hall "1"\\\u2028']]), plain);
      const payload = `{"company_id":${co.C},"asset_no":"K-1","description":"tab\\there 🙂","next_check":"2025-03-01","period":12,`
        + `"location_id":${loc},"data":{"10":1,"2":{"b":1.50,"a":-0},"k":"x\\u2028","1e3":1e3,"big":12345678901234567890}}`;
      const res = await writer.put('/3.0/assets', payload);
      assert.equal(res.status, 201, res.text);
      const id = Number(res.reply<Inserted>().ids[0]);
      const file = await put(world, writer, 'files', body([['asset_id', num(id)], ['filename', 'ä.pdf']]), plain);
      const a = await rowOf(world, 'assets', id);
      const l = await rowOf(world, 'locations', loc);
      const f = await rowOf(world, 'files', file);
      const c = await rowOf(world, 'companies', co.C);
      // A record's version is its last member: after the embeds of a listed record, last of an embedded one.
      const fieldsC = `{"id":${co.C},"name":"C\\tchild","created":"${cellText(c.created)}","logo":null,"subdomain":null,"styles":null,"data":null,`
        + `"parent_id":${co.A},"modified":"${cellText(c.modified)}"`;
      const companyC = `${fieldsC},"version":1}`;
      const expected = `[{"id":${id},"company_id":${co.C},"asset_no":"K-1","serial_no":"","description":"tab\\there 🙂","status":"Active",`
        + `"next_check":"2025-03-01","last_check":null,"last_result":null,"period":12,"location_id":${loc},"department_id":null,"external_type_id":null,`
        + `"date_added":"${cellText(a.date_added)}","data":{"10":1,"2":{"b":1.50,"a":-0},"k":"x\u2028","1e3":1e3,"big":12345678901234567890},`
        + `"modified":"${cellText(a.modified)}","company":${companyC},`
        + `"location":{"id":${loc},"company_id":${co.C},"description":"Hall \\"1\\"\\\\\u2028","creationdate":"${cellText(l.creationdate)}","data":null,`
        + `"modified":"${cellText(l.modified)}","version":1},"department":null,"externaltype":{"id":null,"external_itemtype_id":null,"company_id":null,`
        + `"description":null,"data":null,"modified":null,"version":null},"files":[{"id":${file},"upload_uuid":null,`
        + `"upload_endpoint":"${world.svc.baseUrl}/3.0/upload/${cellText(f.token)}","filedate":"${cellText(f.filedate)}","description":"","filename":"ä.pdf",`
        + `"asset_id":${id},"company_id":${co.C},"data":{},"mimetype":null,"size":null,"modified":"${cellText(f.modified)}","version":1}],"version":1}]`;
      for (const caller of ['A', 'C'] as const) {
        assert.equal(await world.ref.response('assets', [id], { root: co[caller] }), expected, `reference, caller ${caller}`);
        const got = await world.readers[caller].get(`/3.0/assets/id=${id}`);
        assert.equal(responseText(got.text, 'service'), expected, `service, caller ${caller}`);
      }
      // C's parent A is in A's scope but outside C's: there the embed has every member null.
      const a2 = await rowOf(world, 'companies', co.A);
      const parentA = `{"id":${co.A},"name":"A 🙂","created":"${cellText(a2.created)}","logo":null,"subdomain":null,"styles":null,"data":null,`
        + `"parent_id":${co.P},"modified":"${cellText(a2.modified)}","version":1}`;
      const nulls = '{"id":null,"name":null,"created":null,"logo":null,"subdomain":null,"styles":null,"data":null,"parent_id":null,"modified":null,'
        + '"version":null}';
      const asSeenBy = { A: `[${fieldsC},"parentcompany":${parentA},"version":1}]`, C: `[${fieldsC},"parentcompany":${nulls},"version":1}]` };
      for (const caller of ['A', 'C'] as const) {
        assert.equal(await world.ref.response('companies', [co.C], { root: co[caller] }), asSeenBy[caller], `reference, caller ${caller}`);
        const got = await world.readers[caller].get(`/3.0/companies/id=${co.C}`);
        assert.equal(responseText(got.text, 'service'), asSeenBy[caller], `service, caller ${caller}`);
      }
    });

    // Found by the properties below (which now leave these inputs out): the service gets them wrong.
    it('a date in the years 0001–0099 is a real calendar date: accepted, stored and read back', async () => {
      const res = await world.writer.put('/3.0/assets', { company_id: world.co.A, asset_no: tagged('early'), next_check: '0050-06-15' });
      assert.equal(res.status, 201, `${kind}: ${res.text}`);
      const id = Number(res.reply<Inserted>().ids[0]);
      const got = await world.writer.get('/3.0/assets/next_check=0050-06-15');
      assert.equal(got.status, 200, got.text);
      assert.equal(responseText(got.text, kind), await world.ref.response('assets', [id], { root: world.co.P }));
    });

    it('a filter value that begins with U+FEFF keeps it', async () => {
      const plain: Style = { escapeAll: false, upper: false, space: '' };
      const name = tagged('bom');
      const withBom = await put(world, world.writer, 'locations', body([['company_id', num(world.co.A)], ['description', `\uFEFF${name}`]]), plain);
      await put(world, world.writer, 'locations', body([['company_id', num(world.co.A)], ['description', name]]), plain);
      const got = await world.writer.get(`/3.0/locations/description=${encodeValue(`\uFEFF${name}`)}`);
      assert.equal(got.status, 200, got.text);
      assert.equal(responseText(got.text, kind), await world.ref.response('locations', [withBom], { root: world.co.P }), `${kind}: ${got.text}`);
    });

    it('`~` tells U+FFFD, U+FFFE and U+FFFF apart', async () => {
      const plain: Style = { escapeAll: false, upper: false, space: '' };
      const tag = tagged('');
      const chars = ['\uFFFD', '\uFFFE', '\uFFFF'];
      const ids: number[] = [];
      for (const c of chars) {
        ids.push(await put(world, world.writer, 'locations', body([['company_id', num(world.co.A)], ['description', `${tag}x${c}y`]]), plain));
      }
      for (const [i, c] of chars.entries()) {
        const got = await world.writer.get(`/3.0/locations/description~${encodeValue(`${tag}x${c}y`)}`);
        assert.equal(got.status, 200, got.text);
        assert.equal(responseText(got.text, kind), await world.ref.response('locations', [ids[i]!], { root: world.co.P }),
          `${kind}: description~x U+${c.charCodeAt(0).toString(16).toUpperCase()} y: ${got.text}`);
      }
    });

    it('locations and departments', () => property(w, fc.record({
      table: fc.constantFrom<ResourceName>('locations', 'departments'),
      records: fc.array(fc.record({ home, description: text, data }), { minLength: 1, maxLength: 3 }),
      query: queryGen, style,
    }), async (w, { table, records, query, style: st }) => {
      for (const r of records) {
        await put(w, w.writer, table, body([['company_id', num(w.co[r.home])], ['description', tagged(r.description)], ['data', r.data]]), st);
      }
      await checkGet(w, table, query);
    }));

    it('externaltypes', () => property(w, fc.record({
      records: fc.array(fc.record({ home, itemType: fc.boolean(), description: omit(text), data }), { minLength: 1, maxLength: 3 }),
      query: queryGen, style,
    }), async (w, { records, query, style: st }) => {
      for (const r of records) {
        // external_itemtype_id is unique within a company.
        const itemType = r.itemType ? num((tagCounter++ % 2 === 0 ? 1 : -1) * tagCounter * 1000003) : null;
        await put(w, w.writer, 'externaltypes', body([['company_id', num(w.co[r.home])], ['external_itemtype_id', itemType],
          ['description', r.description], ['data', r.data]]), st);
      }
      await checkGet(w, 'externaltypes', query);
    }));

    it('users', () => property(w, fc.record({
      records: fc.array(fc.record({
        home, username: text, email, first_name: omit(text), last_name: omit(text), phone: omit(text), email_confirmed: omit(flag),
        permissions: maybe(fc.tuple(fc.option(fc.constantFrom<JV>(null, 'readonly', 'user', 'admin'), { nil: undefined }),
          fc.option(fc.boolean(), { nil: undefined }), fc.boolean()).map(([level, create, flip]) => {
            const entries: [string, JV][] = [];
            if (level !== undefined) entries.push(['level', level]);
            if (create !== undefined) entries.push(['can_create_companies', create]);
            return new Obj(flip ? entries.reverse() : entries);
          })),
        reminders: omit(flag), data,
      }), { minLength: 1, maxLength: 2 }),
      query: queryGen, style,
    }), async (w, { records, query, style: st }) => {
      for (const r of records) {
        await put(w, w.writer, 'users', body([['username', tagged(r.username)], ['email', r.email], ['first_name', r.first_name],
          ['last_name', r.last_name], ['phone', r.phone], ['email_confirmed', asJson(r.email_confirmed)], ['permissions', r.permissions],
          ['company_id', num(w.co[r.home])], ['reminders', asJson(r.reminders)], ['data', r.data]]), st);
      }
      await checkGet(w, 'users', query);
    }));

    it('companies, whose parent may lie outside the scope', () => property(w, fc.record({
      records: fc.array(fc.record({
        parent: fc.nat(), name: text, logo: maybe(text), subdomain: maybe(text), styles: maybe(jsonObject), data,
      }), { minLength: 1, maxLength: 2 }),
      query: queryGen, style,
    }), async (w, { records, query, style: st }) => {
      for (const r of records) {
        const parents = (await idsOf(w, 'companies')).filter((id) => id !== w.co.P);
        await put(w, w.writer, 'companies', body([['name', r.name.trim() === '' ? tagged(r.name) : r.name], ['logo', r.logo],
          ['subdomain', typeof r.subdomain === 'string' ? tagged(r.subdomain) : r.subdomain], ['styles', r.styles], ['data', r.data],
          ['parent_id', pick(parents, r.parent)]]), st);
      }
      await checkGet(w, 'companies', query);
    }));

    it('assets with their company, location, department, external type and files, some moved to another company', () => property(w, fc.record({
      records: fc.array(fc.record({
        home, bySession: fc.boolean(), asset_no: text, serial_no: omit(text), description: omit(text), status: omit(text),
        next_check: maybe(date), last_check: maybe(date), period: maybe(period),
        location: maybe(fc.nat()), department: maybe(fc.nat()), externaltype: maybe(fc.nat()), data,
        files: fc.array(fc.record({ description: omit(text), filename: omit(filename), filedate: omit(date), data: omit(objectWithK),
          upload: fc.boolean() }), { maxLength: 2 }),
      }), { minLength: 1, maxLength: 3 }),
      move: fc.option(fc.record({ asset: fc.nat(), to: home })),
      query: queryGen, style,
    }), async (w, { records, move, query, style: st }) => {
      for (const r of records) {
        const company = w.co[r.home];
        const record = body([['company_id', num(company)], ['asset_no', tagged(r.asset_no)], ['serial_no', r.serial_no],
          ['description', r.description], ['status', r.status], ['next_check', r.next_check], ['last_check', r.last_check],
          ['period', asJson(r.period)], ['location_id', pick(await idsOf(w, 'locations', company), r.location)],
          ['department_id', pick(await idsOf(w, 'departments', company), r.department)],
          ['external_type_id', pick(await idsOf(w, 'externaltypes', company), r.externaltype)], ['data', r.data]]);
        const id = await put(w, r.bySession && r.home !== 'S' ? w.session : w.writer, 'assets', record, st);
        for (const f of r.files) {
          const file = await put(w, w.writer, 'files', body([['asset_id', num(id)], ['description', f.description],
            ['filename', f.filename], ['filedate', f.filedate], ['data', f.data]]), st);
          if (f.upload) await upload(w, file, f.filename ?? '');
        }
      }
      if (move) {
        const all = await idsOf(w, 'assets');
        await post(w, 'moveasset', { asset_id: all[move.asset % all.length], company_id: w.co[move.to] });
      }
      await checkGet(w, 'assets', query);
    }));

    it('files with their asset (short form) and company', () => property(w, fc.record({
      records: fc.array(fc.record({ asset: fc.nat(), description: omit(text), filename: omit(filename), filedate: omit(date),
        data: omit(objectWithK), upload: fc.boolean() }), { minLength: 1, maxLength: 2 }),
      query: queryGen, style,
    }), async (w, { records, query, style: st }) => {
      for (const f of records) {
        const file = await put(w, w.writer, 'files', body([['asset_id', pick(await idsOf(w, 'assets'), f.asset)],
          ['description', f.description], ['filename', f.filename], ['filedate', f.filedate], ['data', f.data]]), st);
        if (f.upload) await upload(w, file, f.description ?? '');
      }
      await checkGet(w, 'files', query);
    }));

    it('assetreminders with their asset (short form) and user', () => property(w, fc.record({
      records: fc.array(fc.record({ asset: fc.nat(), user: maybe(fc.nat()), due_date: date, remind_date: date, message: omit(text),
        acknowledged: omit(flag), data }), { minLength: 1, maxLength: 2 }),
      query: queryGen, style,
    }), async (w, { records, query, style: st }) => {
      for (const r of records) {
        const assets = await idsOf(w, 'assets');
        const assetId = assets[r.asset % assets.length]!;
        const company = Number((await rowOf(w, 'assets', assetId)).company_id);
        const user = pick(await idsOf(w, 'users', company), r.user);
        // One reminder without a user per asset and due date (the reminder run's key).
        let due = r.due_date;
        if (user === null || user === undefined) {
          const { rows } = await sql<{ due_date: string }>`SELECT due_date FROM assetreminders
            WHERE asset_id = ${assetId} AND user_id IS NULL`.execute(w.svc.database.db);
          const taken = new Set(rows.map((x) => x.due_date));
          while (taken.has(due)) due = otherDay(due);
        }
        await put(w, w.writer, 'assetreminders', body([['asset_id', num(assetId)], ['user_id', user],
          ['due_date', due], ['remind_date', r.remind_date], ['message', r.message], ['acknowledged', asJson(r.acknowledged)],
          ['data', r.data]]), st);
      }
      await checkGet(w, 'assetreminders', query);
    }));

    it('assetqueue entries, some released into assets or rejected', () => property(w, fc.record({
      records: fc.array(fc.record({
        home, asset_no: omit(text), description: text, manufacturer: omit(text), model: omit(text), serial_no: omit(text),
        status: omit(text), last_error: omit(text), next_date: maybe(date), period: maybe(period),
        location: maybe(fc.nat()), department: maybe(fc.nat()), externaltype: maybe(fc.nat()), data,
        release: fc.constantFrom(null, 1, 2),
      }), { minLength: 1, maxLength: 2 }),
      query: queryGen, style,
    }), async (w, { records, query, style: st }) => {
      for (const r of records) {
        const company = w.co[r.home];
        const id = await put(w, w.writer, 'assetqueue', body([['company_id', num(company)],
          ['asset_no', r.asset_no === undefined ? undefined : tagged(r.asset_no)], ['description', tagged(r.description)],
          ['manufacturer', r.manufacturer], ['model', r.model], ['serial_no', r.serial_no], ['status', r.status], ['last_error', r.last_error],
          ['next_date', r.next_date], ['period', asJson(r.period)], ['location_id', pick(await idsOf(w, 'locations', company), r.location)],
          ['department_id', pick(await idsOf(w, 'departments', company), r.department)],
          ['external_type_id', pick(await idsOf(w, 'externaltypes', company), r.externaltype)], ['data', r.data]]), st);
        if (r.release === 2 || (r.release === 1 && r.asset_no !== undefined)) await post(w, `assetqueue/id=${id}`, { released: r.release });
      }
      await checkGet(w, 'assetqueue', query);
    }));

    it('messages with their sender (outside the scope when sent from A to C) and recipient', () => property(w, fc.record({
      records: fc.array(fc.record({
        home: fc.constantFrom<Home>('A', 'C', 'C', 'D', 'S'), bySession: fc.boolean(), target: maybe(fc.nat()),
        date_range_start: maybe(date), date_range_end: maybe(date),
        messagetext: omit(fc.oneof({ weight: 8, arbitrary: text }, { weight: 1, arbitrary: longText(9000, 10000) })),
        message_read: omit(fc.constantFrom(0, 1)), data, markRead: fc.option(fc.constantFrom(0, 1)),
      }), { minLength: 1, maxLength: 2 }),
      query: queryBy('P', 'A', 'A', 'C'), style,
    }), async (w, { records, query, style: st }) => {
      for (const r of records) {
        const company = w.co[r.home];
        const id = await put(w, r.bySession && r.home !== 'S' ? w.session : w.writer, 'messages', body([
          ['target_user_id', pick(await idsOf(w, 'users', company), r.target)], ['company_id', num(company)],
          ['message_read', asJson(r.message_read)], ['date_range_start', r.date_range_start], ['date_range_end', r.date_range_end],
          ['messagetext', r.messagetext], ['data', r.data]]), st);
        if (r.markRead !== null) await post(w, `messages/id=${id}`, { message_read: r.markRead });
      }
      await checkGet(w, 'messages', query);
    }));

    it('auditlog entries with their asset, company, user and file, which may lie outside the scope or be deleted', () => property(w, fc.record({
      notes: fc.array(fc.record({ message: text, asset: fc.option(fc.nat()), bySession: fc.boolean() }), { maxLength: 2 }),
      remove: fc.option(fc.record({ table: fc.constantFrom<ResourceName>('files', 'users', 'assets', 'locations'), pick: fc.nat() })),
      query: queryGen, style,
    }), async (w, { notes, remove, query, style: st }) => {
      if (remove) {
        // Entries keep the ids of deleted records; their embeds show every member null. (Not the session's own user.)
        const ids = (await idsOf(w, SPECS[remove.table].table)).filter((id) => remove.table !== 'users' || id !== w.sessionUser);
        const res = await w.writer.delete(`/3.0/${remove.table}/id=${ids[remove.pick % ids.length]}`);
        // 409: still referred to (an asset's files, a location's assets …).
        if (res.status !== 200 && res.status !== 409) throw new Error(`${w.kind}: DELETE ${remove.table} answered ${res.status}: ${res.text}`);
      }
      for (const n of notes) {
        // A note about an asset belongs to the asset's company; the session sees only A's tree.
        const assets = n.bySession ? (await w.ref.all('assets')).filter((a) => Number(a.company_id) !== w.co.S).map((a) => Number(a.id))
          : await idsOf(w, 'assets');
        const res = await (n.bySession ? w.session.put('auditlog', written(body([['message', tagged(n.message)], ['asset_id', pick(assets, n.asset)]]), st))
          : w.writer.put('/3.0/auditlog', written(body([['message', tagged(n.message)], ['asset_id', pick(assets, n.asset)]]), st)));
        if (res.status !== 201) throw new Error(`${w.kind}: PUT /3.0/auditlog answered ${res.status}: ${res.text}`);
      }
      await checkGet(w, 'auditlog', query);
    }));
  });
}
