// Request bodies are checked field by field against the definition before any
// record is matched or written.
import { invalidField, invalidValue, malformedJson } from '../errors.ts';
import { isDate, isDatetime } from '../model/dates.ts';
import { hasNul, JsonNumber, JsonObject, type JsonValue, jsonDepth, stringifyJson, writtenText } from '../model/json.ts';
import type { FieldDef, ResourceDef, Row, SqlValue } from '../model/types.ts';
import type { Limits } from './types.ts';

const CANONICAL_INT = /^-?(0|[1-9]\d*)$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
// eslint-disable-next-line no-control-regex
const FILENAME_FORBIDDEN = /[/\\\u0000-\u001f\u007f]/;

/** POST takes one object; PUT one object or a non-empty array of objects. */
export function bodyObjects(body: JsonValue | undefined, verb: 'POST' | 'PUT'): JsonObject[] {
  if (body === undefined) throw malformedJson('empty body');
  if (body instanceof JsonObject) return [body];
  if (verb === 'POST' || !Array.isArray(body)) throw malformedJson('expected a JSON object');
  if (body.length === 0) throw malformedJson('empty array');
  if (!body.every((x): x is JsonObject => x instanceof JsonObject)) throw malformedJson('expected an array of JSON objects');
  return body;
}

/** Each definition's fields by name (a PUT reads a thousand bodies). */
const fieldsByName = new WeakMap<ResourceDef, ReadonlyMap<string, FieldDef>>();

function fieldNamed(def: ResourceDef, name: string): FieldDef | undefined {
  let byName = fieldsByName.get(def);
  if (!byName) {
    const map = new Map<string, FieldDef>();
    for (const f of def.fields) if (!map.has(f.name)) map.set(f.name, f);
    fieldsByName.set(def, (byName = map));
  }
  return byName.get(name);
}

/** Reads the fields of one body object; `mode` decides which fields are writable. */
export function readFields(def: ResourceDef, body: JsonObject, mode: 'create' | 'update', limits: Limits): Row {
  const out: Row = {};
  for (const key of body.entries.keys()) {
    const field = fieldNamed(def, key);
    if (!field?.writable || (field.writable !== 'always' && field.writable !== mode)) throw invalidField(key);
    const value = convert(field, body.entries.get(key)!, limits);
    if (value === undefined) throw invalidValue(key);
    // The field's own name: the same text as the key, already interned.
    out[field.name] = value;
  }
  return out;
}

function convert(field: FieldDef, v: JsonValue, limits: Limits): SqlValue | undefined {
  if (v === null) return field.nullable ? null : undefined;
  switch (field.type) {
    case 'int': return integer(v);
    case 'bool': {
      const n = v === true ? 1 : v === false ? 0 : integer(v);
      return n === 0 || n === 1 ? n : undefined;
    }
    case 'string': return typeof v === 'string' && stringFits(field, v, limits) ? v : undefined;
    case 'date': return typeof v === 'string' && isDate(v) ? v : undefined;
    case 'datetime': return typeof v === 'string' && isDatetime(v) ? v : undefined;
    case 'json': {
      if (field.objectOnly && !(v instanceof JsonObject)) return undefined;
      if (jsonDepth(v) > limits.maxJsonDepth) return undefined;
      // An object as written is its canonical text most often, and then holds no NUL.
      const written = v instanceof JsonObject ? writtenText(v) : null;
      if (written === null && hasNul(v)) return undefined;
      const text = written ?? stringifyJson(v);
      return Buffer.byteLength(text) <= limits.maxJsonBytes ? text : undefined;
    }
  }
}

function integer(v: JsonValue): number | undefined {
  const text = v instanceof JsonNumber ? v.text : typeof v === 'string' ? v : null;
  if (text === null || !CANONICAL_INT.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

function stringFits(field: FieldDef, s: string, limits: Limits): boolean {
  const max = field.maxLength ?? limits.maxString;
  if (s.includes('\u0000')) return false;
  if (s.length > max && [...s].length > max) return false;
  if (field.required && s.trim() === '') return false;
  if (field.format === 'filename') return !FILENAME_FORBIDDEN.test(s);
  return field.format !== 'email' || EMAIL.test(s);
}
