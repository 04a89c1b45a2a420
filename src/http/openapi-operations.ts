// Operations of the OpenAPI document: the envelope around each answer, the
// errors each can give, and the generic operations of resource endpoints
// (list, update, create, delete), taken from the endpoint and its definition.
import type { ErrorCode } from '../errors.ts';
import type { Lookup, Need, ResourceDef, Verb } from '../model/types.ts';
import { type ErrorResponses, headerRef, rateLimitHeaders } from './openapi-errors.ts';
import { bodySchema, pascal, type RecordSchemas, ref, type Schema } from './openapi-schemas.ts';
import type { Endpoint, InternalReference, Limits } from '../engine/types.ts';

export interface DocContext {
  readonly resources: readonly ResourceDef[];
  /** References to resources from tables that are no resource (certificates, sessions). */
  readonly internal: readonly InternalReference[];
  readonly lookup: Lookup;
  readonly limits: Limits;
  /** The document's schema components, filled as operations use them. */
  readonly schemas: Record<string, Schema>;
  readonly records: RecordSchemas;
  readonly errors: ErrorResponses;
}

/** Who may call: a certificate alone, a certificate with a session, either (the default), or anyone. */
export type Caller = 'certificate' | 'session' | 'either' | 'anyone';

export interface OperationSpec {
  readonly id: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  /** Least session level, shown in the description. */
  readonly need?: Need;
  readonly caller?: Caller;
  readonly parameters?: readonly Schema[];
  readonly body?: Schema;
  readonly status?: 200 | 201;
  /** The schema of the envelope's `response` member. */
  readonly response?: Schema;
  /** A whole success response instead of the envelope (downloads, the service's own paths). */
  readonly raw?: Schema;
  readonly paginated?: boolean;
  /** The list answers `Accept: text/csv` too. */
  readonly csv?: boolean;
  /** The list answers `Accept: application/pdf` too (a printed list). */
  readonly pdf?: boolean;
  /** Further success responses, by status (a CSV import's dry run). */
  readonly more?: Readonly<Record<string, Schema>>;
  readonly errors: Readonly<Record<number, readonly ErrorCode[]>>;
  /** A write takes an Idempotency-Key; every one does but an upload. */
  readonly keyed?: boolean;
  /** A write takes If-Match: POST and DELETE of resource endpoints. */
  readonly ifMatch?: boolean;
}

const SECURITY: Readonly<Record<Exclude<Caller, 'either'>, Schema[]>> = {
  certificate: [{ mutualTLS: [] }],
  session: [{ mutualTLS: [], session: [] }],
  anyone: [],
};

/** The envelope's members in their order: `request`, `pagination` on lists, then `response`. */
export const envelope = (response: Schema, paginated: boolean): Schema => ({
  type: 'object',
  required: ['request', ...(paginated ? ['pagination'] : []), 'response'],
  properties: { request: ref('Request'), ...(paginated ? { pagination: ref('Pagination') } : {}), response },
  additionalProperties: false,
});

const NEED_TEXT: Readonly<Record<Need, string>> = {
  readonly: 'any session', user: 'a `user` or `admin` session', admin: 'an `admin` session',
  creator: 'an `admin` session with `can_create_companies`',
};

/** Every GET answer in the envelope carries an ETag, and `If-None-Match` with it gets 304. */
const NOT_MODIFIED: Schema = { description: 'Not modified: the answer would carry the `ETag` sent in `If-None-Match`. No body.',
  headers: { ...rateLimitHeaders(), ETag: headerRef('ETag') } };

/** A CSV import's body and its dry run's answer. */
const CSV_IMPORT: Schema = { schema: {
  type: 'string',
  description: 'A header row naming any of the export\'s columns (read-only and embed columns are ignored), then one record per row. '
    + 'One bad row refuses the file (400 `invalid_rows`, each bad row listed). `X-Dry-Run: true` checks the rows and writes nothing.',
} };
const DRY_RUN: Schema = {
  description: '`X-Dry-Run: true`: every row would be created; nothing was written.',
  headers: { ...rateLimitHeaders() },
  content: { 'application/json': { schema: envelope({ type: 'object', required: ['records_valid'], additionalProperties: false,
    properties: { records_valid: { type: 'integer', minimum: 0 } } }, false) } },
};

/** A list asked with `Accept: text/csv`. */
const CSV: Schema = { schema: {
  type: 'string',
  description: 'Every matching record, no paging (RFC 4180, a header row): the record\'s own fields without JSON fields, `data.<key>` '
    + 'for each key of `data` in the result (sorted), `<embed>.name` of an embedded company and `<embed>.description` of the other '
    + 'embeds. Nulls are empty cells; a cell starting with `=`, `+`, `-`, `@`, tab, CR or `\'` gets a leading `\'`.',
} };

/** A list asked with `Accept: application/pdf`. */
const PDF: Schema = { schema: {
  type: 'string', format: 'binary',
  description: 'Every matching record, no paging, as a printable A4 list: the caller\'s company\'s name and logo, the filter as sent, '
    + 'today\'s date in the company\'s time zone, one line per record (text too long for its column is cut with "…"; characters outside '
    + 'Windows-1252 are replaced), and "Page N of M" on every page.',
} };

/** The errors a write's Idempotency-Key and If-Match add to its own. */
function withHeaderErrors(errors: Readonly<Record<number, readonly ErrorCode[]>>, keyed: boolean, ifMatch: boolean) {
  const out: Record<number, readonly ErrorCode[]> = { ...errors };
  const add = (status: number, code: ErrorCode) => { if (!out[status]?.includes(code)) out[status] = [...(out[status] ?? []), code]; };
  if (keyed || ifMatch) add(400, 'invalid_value');
  if (keyed) {
    add(409, 'idempotency_in_flight');
    add(422, 'idempotency_mismatch');
  }
  if (ifMatch) add(412, 'precondition_failed');
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => Number(a) - Number(b)));
}

export function operation(ctx: DocContext, spec: OperationSpec, method = 'get'): Schema {
  const access = spec.need ? `Basic mode (certificate alone) may always call this; in a session it needs ${NEED_TEXT[spec.need]}.` : '';
  const description = [spec.description, access].filter((d) => d).join('\n\n');
  const conditional = method === 'get' && !spec.raw;
  const keyed = method !== 'get' && spec.keyed !== false;
  const ifMatch = spec.ifMatch === true;
  const parameters = [...(spec.parameters ?? []), ...(conditional ? [{ $ref: '#/components/parameters/IfNoneMatch' }] : []),
    ...(ifMatch ? [{ $ref: '#/components/parameters/IfMatch' }] : []), ...(keyed ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : [])];
  return {
    operationId: spec.id,
    summary: spec.summary,
    ...(description ? { description } : {}),
    tags: [spec.tag],
    ...(spec.need ? { 'x-session-level': spec.need } : {}),
    ...(spec.caller && spec.caller !== 'either' ? { security: SECURITY[spec.caller] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body ? { requestBody: spec.body } : {}),
    responses: {
      [String(spec.status ?? 200)]: spec.raw ?? {
        description: spec.summary,
        headers: { ...rateLimitHeaders(), ...(conditional ? { ETag: headerRef('ETag') } : {}),
          ...(keyed ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {}) },
        content: {
          'application/json': { schema: envelope(spec.response ?? {}, spec.paginated ?? false) },
          ...(spec.csv ? { 'text/csv': CSV } : {}),
          ...(spec.pdf ? { 'application/pdf': PDF } : {}),
        },
      },
      ...(conditional ? { 304: NOT_MODIFIED } : {}),
      ...spec.more,
      ...ctx.errors.responses(withHeaderErrors(spec.errors, keyed, ifMatch)),
    },
  };
}

export const jsonBody = (schema: Schema, description: string): Schema => ({
  required: true,
  description: `${description} Parsed as JSON whatever the Content-Type says.`,
  content: { 'application/json': { schema } },
});

interface ErrorOptions {
  readonly bad?: readonly ErrorCode[];
  readonly unauthorized?: readonly ErrorCode[];
  readonly need?: Need;
  readonly conflict?: boolean;
  /** The request has a JSON body, which may be too large. */
  readonly body?: boolean;
  /** The path has segments after the endpoint, which may make the request line too long. */
  readonly long?: boolean;
  readonly more?: Readonly<Record<number, readonly ErrorCode[]>>;
}

/** The errors of an operation: its own, and those every /3.0 request can meet. */
export function errorsOf(o: ErrorOptions): Record<number, readonly ErrorCode[]> {
  const out: Record<number, readonly ErrorCode[]> = {};
  if (o.bad?.length) out[400] = o.bad;
  out[401] = o.unauthorized ?? ['no_access', 'bad_session'];
  if (o.need && o.need !== 'readonly') out[403] = ['forbidden'];
  if (o.conflict) out[409] = ['data_error'];
  if (o.body) out[413] = ['too_large'];
  if (o.long) out[414] = ['too_long'];
  Object.assign(out, o.more);
  out[429] = ['rate_limited'];
  out[431] = ['too_long'];
  out[500] = ['internal'];
  return out;
}

const COUNTS = (a: string, b: string): Schema => ({
  type: 'object', required: [a, b], additionalProperties: false,
  properties: { [a]: { type: 'integer', minimum: 0 }, [b]: { type: 'integer', minimum: 0 } },
});
export const UPDATED = COUNTS('records_updated', 'records_found');
export const DELETED = COUNTS('records_deleted', 'records_found');
export const CREATED: Schema = {
  type: 'object', required: ['records_inserted', 'ids'], additionalProperties: false,
  properties: { records_inserted: { type: 'integer', minimum: 1 }, ids: { type: 'array', items: { type: 'integer' } } },
};

/** Whether a delete can be refused because records elsewhere still refer to the record. */
function referenced(ctx: DocContext, def: ResourceDef): boolean {
  return ctx.resources.some((d) => d.fields.some((f) => f.references?.resource === def.name && f.references.onDelete === 'restrict'))
    || ctx.internal.some((r) => r.resource === def.name && r.onDelete === 'restrict');
}

export type Operations = Partial<Record<'get' | 'post' | 'put' | 'delete', OperationSpec>>;

/** The generic operations of a resource endpoint, by path: lists on both, create without filters, update and delete with them. */
export function resourceOperations(ctx: DocContext, e: Endpoint, def: ResourceDef): { plain: Operations; filtered: Operations } {
  const name = pascal(def.name);
  const records = { type: 'array', items: ref(ctx.records.record(def)) };
  const has = (v: Verb) => e.handlers[v] !== undefined;
  // A write can clash with a unique value (data_error).
  const unique = (def.unique?.length ?? 0) > 0;
  const need = (v: Verb) => e.access[v] ?? 'admin';
  // Filters may come in the query string too, on every operation that takes them; a page only on lists.
  const queryFilter = { $ref: '#/components/parameters/Filter' };
  const list = (filtered: boolean): OperationSpec => ({
    id: `list${name}${filtered ? 'Filtered' : ''}`, tag: def.name, need: need('GET'), paginated: true, csv: true, pdf: e.printable === true,
    response: records,
    summary: filtered ? `List the ${def.name} records matching the filters` : `List ${def.name} records`,
    description: `${ctx.limits.pageSize} records per page, in the order of \`X-API-Result-Order\` (default \`id\`).`,
    parameters: [{ $ref: '#/components/parameters/ResultOrder' }, queryFilter, { $ref: '#/components/parameters/Page' }],
    errors: errorsOf({ bad: ['invalid_filter', 'malformed_order'], need: need('GET'), long: filtered,
      // The change feed refuses a cursor below its retention.
      more: def.name === 'changes' ? { 406: ['not_acceptable'], 410: ['cursor_expired'] } : { 406: ['not_acceptable'] } }),
  });
  const plain: Operations = {};
  const filtered: Operations = {};
  if (has('GET')) {
    plain.get = list(false);
    filtered.get = list(true);
  }
  if (has('PUT')) {
    const json = jsonBody({ oneOf: [ref(`${name}Create`), { type: 'array', minItems: 1, maxItems: ctx.limits.maxBatch, items: ref(`${name}Create`) }] },
      'The fields of the new record(s).');
    plain.put = {
      id: `create${name}`, tag: def.name, need: need('PUT'), status: 201, response: CREATED,
      summary: `Create ${def.name} records`,
      description: `One object, or an array of up to ${ctx.limits.maxBatch} objects; all are created or none. `
        + 'Filters are refused (400 `invalid_filter`).'
        + (e.csvImport ? ' With `Content-Type: text/csv`, a CSV import: one record per row, no limit on their number.' : ''),
      body: e.csvImport ? { ...json, content: { ...(json.content as Schema), 'text/csv': CSV_IMPORT } } : json,
      ...(e.csvImport ? { more: { 200: DRY_RUN } } : {}),
      errors: errorsOf({ bad: ['invalid_filter', 'invalid_field', 'invalid_value', 'malformed_json', 'too_many',
        ...(e.csvImport ? ['invalid_rows' as const] : [])], need: need('PUT'), conflict: unique, body: true }),
    };
    ctx.schemas[`${name}Create`] = bodySchema(def, 'create', ctx.limits);
  }
  // Update and delete: on the path with filter segments, and on the bare path with filters in the query only.
  const where = (byQuery: boolean) => (byQuery
    ? 'Sent without a `filter` parameter, the request is refused with 400 `filter_required`.'
    : 'Sent without filters (`/3.0/<endpoint>`), the request is refused with 400 `filter_required`.');
  const byQuery = (byQuery: boolean) => (byQuery ? { id: 'ByQuery', summary: ' (filters in the query string)' } : { id: '', summary: '' });
  if (has('POST')) {
    const update = (q: boolean): OperationSpec => ({
      id: `update${name}${byQuery(q).id}`, tag: def.name, need: need('POST'), response: UPDATED,
      summary: `Update every ${def.name} record matching the filters${byQuery(q).summary}`,
      description: 'Sets the given fields on every matched record, in one transaction. `records_updated` counts the records whose values '
        + `changed. ${where(q)}`,
      parameters: [queryFilter],
      body: jsonBody(ref(`${name}Update`), 'The fields to set.'),
      ifMatch: true,
      errors: errorsOf({ bad: ['invalid_filter', 'filter_required', 'invalid_field', 'invalid_value', 'malformed_json'], need: need('POST'),
        conflict: unique, body: true, long: !q }),
    });
    filtered.post = update(false);
    plain.post = update(true);
    ctx.schemas[`${name}Update`] = bodySchema(def, 'update', ctx.limits);
  }
  if (has('DELETE')) {
    const remove = (q: boolean): OperationSpec => ({
      id: `delete${name}${byQuery(q).id}`, tag: def.name, need: need('DELETE'), response: DELETED,
      summary: `Delete every ${def.name} record matching the filters${byQuery(q).summary}`,
      description: `All matched records go, or none${referenced(ctx, def) ? ': a record still referenced elsewhere refuses the whole delete with 409' : ''}. `
        + where(q),
      parameters: [queryFilter],
      ifMatch: true,
      errors: errorsOf({ bad: ['invalid_filter', 'filter_required'], need: need('DELETE'), conflict: referenced(ctx, def), long: !q }),
    });
    filtered.delete = remove(false);
    plain.delete = remove(true);
  }
  return { plain, filtered };
}
