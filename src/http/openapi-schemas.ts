// JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of records and request bodies,
// derived from the resource definitions, so the document describes exactly the
// fields the engine reads and writes.
import { relationFields } from '../filter/resolve.ts';
import type { FieldDef, FieldType, Lookup, RelationDef, ResourceDef } from '../model/types.ts';
import type { Limits } from '../engine/types.ts';

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** `assetqueue` → `Assetqueue`, `webhook_deliveries` → `WebhookDeliveries`: names of components and operations. */
export const pascal = (name: string) => name.split(/[^A-Za-z0-9]+/).map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');

export const DATETIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$';
const CANONICAL_INT = '^-?(0|[1-9][0-9]*)$';
const NON_BLANK = '\\S';
const EMAIL = '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$';
const FILENAME = '^[^/\\\\\\u0000-\\u001f\\u007f]*$';

/** A value as responses carry it. */
const OUTPUT: Readonly<Record<FieldType, Schema>> = {
  int: { type: 'integer' },
  bool: { type: 'integer', enum: [0, 1] },
  string: { type: 'string' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', pattern: DATETIME_PATTERN },
  json: {},
};

/** Adds JSON null to what a schema accepts. */
function orNull(s: Schema): Schema {
  if (Array.isArray(s.enum)) return { ...s, type: undefined, enum: [...(s.enum as unknown[]), null] };
  if (typeof s.type === 'string') return { ...s, type: [s.type, 'null'] };
  if (Array.isArray(s.type)) return { ...s, type: [...(s.type as unknown[]), 'null'] };
  return { anyOf: [s, { type: 'null' }] };
}

const clean = (s: Schema): Schema => Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));

/** An object of any members: `additionalProperties` said outright, so that generated clients type it as a map, not `{}`. */
const OPEN_OBJECT: Schema = { type: 'object', additionalProperties: true };

function jsonSchema(f: FieldDef): Schema {
  if (f.nameList) {
    return { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', minLength: 1 },
      description: 'Event names (`assets.created`, `assetqueue.released`, …), or `["*"]` for every event.' };
  }
  if (f.objectOnly) return OPEN_OBJECT;
  // Any JSON value, most often an object of custom keys (listed first, so that clients can narrow to it); null when nullable.
  return { anyOf: [OPEN_OBJECT, { type: ['array', 'string', 'number', 'boolean', ...(f.nullable ? ['null'] : [])] }] };
}

/** Nullable fields take null, except free JSON, whose schema says so itself. */
const nullable = (f: FieldDef) => f.nullable === true && (f.type !== 'json' || f.objectOnly === true);

const VERSION: Schema = { type: 'integer', minimum: 1,
  description: '1 on create, one more with every change to a stored value; `If-Match` takes it.' };

export function outputSchema(f: FieldDef): Schema {
  if (f.counter) return VERSION;
  const base = f.type === 'json' ? jsonSchema(f) : OUTPUT[f.type];
  return clean(nullable(f) ? orNull(base) : base);
}

/** A value as a body may give it: integers also as canonical decimal strings, flags also as booleans. */
export function inputSchema(f: FieldDef, limits: Limits): Schema {
  let base: Schema;
  switch (f.type) {
    case 'int':
      base = { anyOf: [{ type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
        { type: 'string', pattern: CANONICAL_INT }] };
      break;
    case 'bool': base = { enum: [0, 1, '0', '1', false, true] }; break;
    case 'string': {
      const pattern = f.format === 'email' ? EMAIL : f.format === 'filename' ? FILENAME : f.required ? NON_BLANK : undefined;
      base = clean({ type: 'string', maxLength: f.maxLength ?? limits.maxString, pattern });
      break;
    }
    case 'json': base = jsonSchema(f); break;
    default: base = OUTPUT[f.type];
  }
  return clean(nullable(f) ? orNull(base) : base);
}

/** An object with exactly these fields, in this order. */
export const objectOf = (fields: readonly FieldDef[]): Schema => ({
  type: 'object',
  required: fields.map((f) => f.name),
  properties: Object.fromEntries(fields.map((f) => [f.name, outputSchema(f)])),
  additionalProperties: false,
});

/** The body of a create (PUT, one object) or an update (POST): the fields writable in that mode, nothing else. */
export function bodySchema(def: ResourceDef, mode: 'create' | 'update', limits: Limits): Schema {
  const fields = def.fields.filter((f) => f.writable === 'always' || f.writable === mode);
  const required = mode === 'create' ? fields.filter((f) => f.required).map((f) => f.name) : [];
  return {
    type: 'object',
    ...(required.length > 0 ? { required } : {}),
    properties: Object.fromEntries(fields.map((f) => [f.name, inputSchema(f, limits)])),
    additionalProperties: false,
  };
}

/** Field → type, for every name a filter of the endpoint may use besides JSON paths. */
export function filterableFields(def: ResourceDef, lookup: Lookup): Record<string, string> {
  const typeOf = (f: FieldDef) => `${f.type}${f.nullable ? ' or null' : ''}`;
  const out: Record<string, string> = {};
  for (const f of def.fields) out[f.name] = typeOf(f);
  for (const r of def.relations) {
    if (r.back) continue;
    for (const f of relationFields(r, lookup(r.resource))) out[`${r.name}.${f.name}`] = typeOf(f);
  }
  return out;
}

/**
 * Record schemas: one component per resource, and one per embedded form (a
 * target's full field list, or a short form such as the asset's), shared by
 * every record that embeds it.
 */
export class RecordSchemas {
  private readonly embedded = new Map<string, string>();

  /** `components` is the document's schema map, which this fills. */
  constructor(private readonly lookup: Lookup, private readonly components: Record<string, Schema>) {}

  /** The component name of a resource's record, made on first use. */
  record(def: ResourceDef): string {
    const name = pascal(def.name);
    if (this.components[name]) return name;
    const own = objectOf(def.fields);
    const embeds = Object.fromEntries(def.relations.map((r) => [r.name, this.embed(r)]));
    // In the order records show them: the version after the embeds.
    const { version, ...fields } = own.properties as Schema;
    this.components[name] = { ...own, required: [...own.required as string[], ...Object.keys(embeds)],
      properties: { ...fields, ...embeds, ...(version ? { version } : {}) } };
    return name;
  }

  private embed(r: RelationDef): Schema {
    const target = this.lookup(r.resource);
    const fields = relationFields(r, target);
    const key = `${target.name}:${fields.map((f) => f.name).join(',')}`;
    let name = this.embedded.get(key);
    if (!name) {
      const base = `${pascal(target.name)}${fields === target.fields ? 'Embedded' : 'Short'}`;
      name = base;
      for (let i = 2; this.components[name]; i++) name = `${base}${i}`;
      this.components[name] = objectOf(fields);
      this.embedded.set(key, name);
    }
    if (r.back) return { type: 'array', items: ref(name) };
    this.components.HiddenRecord ??= {
      type: 'object', additionalProperties: { type: 'null' },
      description: 'An embedded record the caller may not see, or an empty reference shown as a record: every member null.',
    };
    if (r.through) return { type: 'array', items: { anyOf: [ref(name), ref('HiddenRecord')] } };
    return { anyOf: [ref(name), ref('HiddenRecord'), ...(r.empty === 'null' ? [{ type: 'null' }] : [])] };
  }
}
