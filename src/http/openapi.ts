// The OpenAPI 3.1 document of the whole API, generated from the same registry
// the engine runs on, so it cannot drift from what is served.
import type { Registry } from '../engine/context.ts';
import type { Endpoint } from '../engine/endpoint.ts';
import { relationFields } from '../filter/resolve.ts';
import type { FieldDef, FieldType, ResourceDef, Verb } from '../model/types.ts';

type Schema = Record<string, unknown>;

const TYPES: Readonly<Record<FieldType, Schema>> = {
  int: { type: 'integer' },
  bool: { type: 'integer', enum: [0, 1] },
  string: { type: 'string' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$' },
  json: {},
};

function fieldSchema(f: FieldDef): Schema {
  const base: Schema = { ...TYPES[f.type], ...(f.writable ? {} : { readOnly: true }) };
  return f.nullable && f.type !== 'json' ? { ...base, type: [base.type, 'null'] } : base;
}

const objectOf = (fields: readonly FieldDef[]): Schema =>
  ({ type: 'object', properties: Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])) });

function recordSchema(def: ResourceDef, registry: Registry): Schema {
  const own = objectOf(def.fields);
  const embeds = Object.fromEntries(def.relations.map((r) => {
    const target = objectOf(relationFields(r, registry.lookup(r.resource)));
    return [r.name, r.back ? { type: 'array', items: target, readOnly: true } : { ...target, readOnly: true }];
  }));
  return { ...own, properties: { ...(own.properties as Schema), ...embeds } };
}

const ENVELOPE_RESPONSES = {
  default: { description: 'Envelope with `request` and `response` (an error has `response.error` and `response.code`)' },
};

const VERB_SUMMARY: Readonly<Record<Verb, string>> = {
  GET: 'List records matching the filters (30 per page)',
  POST: 'Update every record matched by the filters',
  PUT: 'Create one record or an array of records',
  DELETE: 'Delete every record matched by the filters',
};

export function openApiDocument(registry: Registry, endpoints: ReadonlyMap<string, Endpoint>, baseUrl: string): Schema {
  const paths: Schema = {};
  for (const e of endpoints.values()) {
    const ops = Object.fromEntries(Object.keys(e.handlers).map((verb) => [verb.toLowerCase(), {
      summary: VERB_SUMMARY[verb as Verb], operationId: `${verb.toLowerCase()}_${e.name}`, responses: ENVELOPE_RESPONSES,
    }]));
    paths[`/3.0/${e.name}`] = ops;
    paths[`/3.0/${e.name}/{filters}`] = {
      ...ops,
      parameters: [{ name: 'filters', in: 'path', required: true, schema: { type: 'string' },
        description: 'One or more `/`-separated segments `<field><operator><value>` (operators = > < ! ~ + -)' }],
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Asset Tracking Service', version: '3.0' },
    servers: [{ url: baseUrl }],
    components: {
      schemas: Object.fromEntries(registry.all.map((d) => [d.name, recordSchema(d, registry)])),
      securitySchemes: { clientCertificate: { type: 'mutualTLS' } },
    },
    security: [{ clientCertificate: [] }],
    paths,
  };
}
