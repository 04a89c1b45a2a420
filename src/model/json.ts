// An order-preserving JSON reader. `JSON.parse` moves integer-like keys to the
// front of an object and rounds long numbers; dynamic JSON (`data`, `styles`) must
// come back with its keys in the order written and its numbers as written, on both
// databases. So request bodies are read into this small tree instead, and dynamic
// values are stored as the canonical (minified) text of that tree.

export class JsonNumber {
  constructor(readonly text: string) {}
  get value(): number { return Number(this.text); }
}

export class JsonObject {
  readonly entries = new Map<string, JsonValue>();
  /** The text the parser read this object from and where in it the object starts (see writtenText). */
  source: string | null = null;
  start = 0;
}

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject;

export class JsonSyntaxError extends Error {}

/** A member of an object (undefined when `v` is no object or lacks it). */
export const memberOf = (v: JsonValue | null | undefined, key: string): JsonValue | undefined => (v instanceof JsonObject ? v.entries.get(key) : undefined);

const MAX_NESTING = 256;

export function parseJson(text: string): JsonValue {
  const p = new Parser(text);
  p.space();
  const v = p.value(0);
  p.space();
  if (p.i < text.length) p.fail();
  return v;
}

class Parser {
  i = 0;
  /** By depth, the keys of the last object read there, in order: the next object's are most often the same. */
  private readonly keys: string[][] = [];
  constructor(private readonly s: string) {}

  fail(what?: string): never {
    if (what) throw new JsonSyntaxError(`${what} at position ${this.i}`);
    if (this.i >= this.s.length) throw new JsonSyntaxError('unexpected end of input');
    throw new JsonSyntaxError(`unexpected character ${JSON.stringify(this.s[this.i])} at position ${this.i}`);
  }

  space(): void {
    for (let c = this.s.charCodeAt(this.i); c === 32 || c === 9 || c === 10 || c === 13; c = this.s.charCodeAt(++this.i));
  }

  value(depth: number): JsonValue {
    const c = this.s[this.i];
    if (c === '{') return this.object(depth + 1);
    if (c === '[') return this.array(depth + 1);
    if (c === '"') return this.string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    for (const [word, v] of LITERALS) {
      if (this.s.startsWith(word, this.i)) { this.i += word.length; return v; }
    }
    return this.fail();
  }

  object(depth: number): JsonObject {
    if (depth > MAX_NESTING) this.fail('nesting too deep');
    const o = new JsonObject();
    o.source = this.s;
    o.start = this.i;
    this.i++;
    this.space();
    if (this.s[this.i] === '}') { this.i++; return o; }
    const known = (this.keys[depth] ??= []);
    for (let n = 0; ; n++) {
      if (this.s[this.i] !== '"') this.fail();
      const key = this.key(known, n);
      this.space();
      if (this.s[this.i] !== ':') this.fail();
      this.i++;
      this.space();
      const v = this.value(depth);
      o.entries.delete(key); // the last duplicate wins, at its own position
      o.entries.set(key, v);
      this.space();
      const c = this.s[this.i++];
      if (c === '}') return o;
      if (c !== ',') { this.i--; this.fail(); }
      this.space();
    }
  }

  array(depth: number): JsonValue[] {
    if (depth > MAX_NESTING) this.fail('nesting too deep');
    const a: JsonValue[] = [];
    this.i++;
    this.space();
    if (this.s[this.i] === ']') { this.i++; return a; }
    for (;;) {
      a.push(this.value(depth));
      this.space();
      const c = this.s[this.i++];
      if (c === ']') return a;
      if (c !== ',') { this.i--; this.fail(); }
      this.space();
    }
  }

  /**
   * The `n`th key of an object: when it is written as the `n`th of the object read
   * before at this depth (an array of records), that string again, not a copy of it.
   */
  key(known: string[], n: number): string {
    const { s } = this;
    const guess = known[n];
    if (guess !== undefined && s.charCodeAt(this.i + guess.length + 1) === 34 && s.startsWith(guess, this.i + 1)) {
      this.i += guess.length + 2;
      return guess;
    }
    const start = this.i;
    const key = this.string();
    // Kept only when written without escapes: then the text between its quotes is the key itself.
    if (this.i - start === key.length + 2) known[n] = key;
    return key;
  }

  /**
   * The longest `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?` here within 400 characters
   * (a longer number is cut there, and what follows refused).
   */
  number(): JsonNumber {
    const { s } = this;
    const start = this.i;
    const end = Math.min(s.length, start + 400);
    let i = start;
    if (s.charCodeAt(i) === 45) i++;
    if (i < end && s.charCodeAt(i) === 48) i++;
    else if (digitAt(s, i, end)) while (digitAt(s, i, end)) i++;
    else this.fail();
    if (i < end && s.charCodeAt(i) === 46 && digitAt(s, i + 1, end)) for (i += 2; digitAt(s, i, end); i++);
    if (i < end && (s.charCodeAt(i) === 101 || s.charCodeAt(i) === 69)) {
      let j = i + 1;
      if (j < end && (s.charCodeAt(j) === 43 || s.charCodeAt(j) === 45)) j++;
      if (digitAt(s, j, end)) for (i = j + 1; digitAt(s, i, end); i++);
    }
    this.i = i;
    return new JsonNumber(s.slice(start, i));
  }

  string(): string {
    const { s } = this;
    const start = ++this.i;
    // Most strings hold no escape: one pass finds their end.
    for (let i = start; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 34) { this.i = i + 1; return s.slice(start, i); }
      if (c === 92 || c < 0x20) break;
    }
    let out = '';
    for (;;) {
      const c = this.s.charCodeAt(this.i);
      if (Number.isNaN(c)) this.fail();
      if (c === 34) { this.i++; return out; }
      if (c < 0x20) this.fail();
      if (c !== 92) { out += this.s[this.i++]; continue; }
      const e = this.s[this.i + 1];
      const simple = e === undefined ? undefined : ESCAPES[e];
      if (simple !== undefined) { out += simple; this.i += 2; continue; }
      if (e !== 'u') { this.i++; this.fail(); }
      out += this.unicodeEscape();
    }
  }

  unicodeEscape(): string {
    const hex = (at: number) => (/^[0-9a-fA-F]{4}$/.test(this.s.slice(at, at + 4)) ? parseInt(this.s.slice(at, at + 4), 16) : -1);
    const u = hex(this.i + 2);
    if (u < 0) this.fail('invalid unicode escape');
    if (u >= 0xdc00 && u <= 0xdfff) this.fail('invalid unicode escape');
    if (u < 0xd800 || u > 0xdbff) { this.i += 6; return String.fromCharCode(u); }
    const low = this.s.startsWith('\\u', this.i + 6) ? hex(this.i + 8) : -1;
    if (low < 0xdc00 || low > 0xdfff) this.fail('invalid unicode escape');
    this.i += 12;
    return String.fromCharCode(u, low);
  }
}

const digitAt = (s: string, at: number, end: number) => at < end && s.charCodeAt(at) >= 48 && s.charCodeAt(at) <= 57;
const LITERALS: readonly (readonly [string, JsonValue])[] = [['true', true], ['false', false], ['null', null]];
const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** Canonical minified text of a value: keys in written order, numbers as written. */
export function stringifyJson(v: JsonValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof JsonNumber) return v.text;
  if (Array.isArray(v)) return `[${v.map(stringifyJson).join(',')}]`;
  // Keys and get, not `for (const [k, x] of …)`: the destructured entries cost some 60 bytes and 100 ns each.
  let out = '';
  for (const k of v.entries.keys()) out += `${out ? ',' : ''}${JSON.stringify(k)}:${stringifyJson(v.entries.get(k)!)}`;
  return `{${out}}`;
}

/**
 * The object's text as the parser read it, when that is its canonical text (what
 * stringifyJson writes: the object was written minified, without escapes, and is
 * unchanged since), else null. Then it holds no NUL either. Checked member by member
 * against the text, without building any: a PUT of 1,000 assets spent some 3 ms
 * writing their `data` anew.
 */
export function writtenText(o: JsonObject): string | null {
  if (o.source === null) return null;
  const end = writtenAt(o, o.source, o.start);
  return end < 0 ? null : o.source.slice(o.start, end);
}

// eslint-disable-next-line no-control-regex
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Where canonical `v` ends when `text` holds it at `at`, else -1. */
function writtenAt(v: JsonValue, text: string, at: number): number {
  if (v === null) return text.startsWith('null', at) ? at + 4 : -1;
  if (typeof v === 'boolean') return text.startsWith(v ? 'true' : 'false', at) ? at + (v ? 4 : 5) : -1;
  if (typeof v === 'string') return quotedAt(v, text, at);
  if (v instanceof JsonNumber) return text.startsWith(v.text, at) ? at + v.text.length : -1;
  const array = Array.isArray(v);
  if (text.charCodeAt(at) !== (array ? 91 : 123)) return -1;
  let next = at + 1;
  let first = true;
  if (array) {
    for (const x of v) {
      if (!first && text.charCodeAt(next++) !== 44) return -1;
      first = false;
      if ((next = writtenAt(x, text, next)) < 0) return -1;
    }
    return text.charCodeAt(next) === 93 ? next + 1 : -1;
  }
  for (const k of v.entries.keys()) {
    if (!first && text.charCodeAt(next++) !== 44) return -1;
    first = false;
    next = quotedAt(k, text, next);
    if (next < 0 || text.charCodeAt(next) !== 58) return -1;
    if ((next = writtenAt(v.entries.get(k)!, text, next + 1)) < 0) return -1;
  }
  return text.charCodeAt(next) === 125 ? next + 1 : -1;
}

/** Where `"s"` ends when `text` holds it at `at` and JSON.stringify would write `s` so (nothing to escape), else -1. */
function quotedAt(s: string, text: string, at: number): number {
  const end = at + s.length + 1;
  return text.charCodeAt(at) === 34 && text.charCodeAt(end) === 34 && text.startsWith(s, at + 1) && !ESCAPED.test(s) ? end + 1 : -1;
}

/** Nesting depth: 0 for a scalar, 1 for a flat object or array. */
export function jsonDepth(v: JsonValue): number {
  if (Array.isArray(v)) return 1 + v.reduce<number>((m, x) => Math.max(m, jsonDepth(x)), 0);
  if (v instanceof JsonObject) {
    let m = 0;
    for (const x of v.entries.values()) m = Math.max(m, jsonDepth(x));
    return 1 + m;
  }
  return 0;
}

/** True when the value (at any depth) holds a string with a NUL character, which no engine stores. */
export function hasNul(v: JsonValue): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (Array.isArray(v)) return v.some(hasNul);
  if (v instanceof JsonObject) {
    for (const k of v.entries.keys()) if (k.includes('\u0000') || hasNul(v.entries.get(k)!)) return true;
  }
  return false;
}

/** Object-building helper for JSON text assembled by the service itself (audit, responses). */
export function jsonObjectText(members: Iterable<readonly [string, string]>): string {
  let out = '';
  for (const [k, text] of members) out += `${out ? ',' : ''}${JSON.stringify(k)}:${text}`;
  return `{${out}}`;
}
