// The OpenAPI 3.1 document of the whole API, generated from the same registry
// and endpoints the engine runs on, so it cannot drift from what is served.
import { DEFAULT_LIMITS } from '../engine/context.ts';
import { endpointPaths, TAG_DESCRIPTIONS } from './openapi-endpoints.ts';
import { ErrorResponses, HEADER_COMPONENTS } from './openapi-errors.ts';
import { type DocContext, operation } from './openapi-operations.ts';
import {
  filterQueryParameter, IDEMPOTENCY_KEY, IF_MATCH, IF_NONE_MATCH, pageQueryParameter, RESULT_ORDER,
} from './openapi-parameters.ts';
import { RecordSchemas, ref, type Schema } from './openapi-schemas.ts';
import type { Endpoint, Limits, Registry } from '../engine/types.ts';

const DESCRIPTION = (limits: Limits) => `Every endpoint is \`/3.0/<endpoint>[/<filter>...]\`.

**Authentication.** Every \`/3.0\` call presents a self-signed TLS client certificate that the operator registered (\`mutualTLS\`). \
Through a certificate registered with impersonation, \`login\` opens a session: later calls send its token as HTTP basic credentials \
(the \`session\` scheme: username \`session\`, password the token) and run with that user's company tree and access level.

**Verbs.** GET lists records; POST updates every record the filters match (filters are mandatory); PUT creates one record or an array \
of them (no filters); DELETE deletes every matched record (filters are mandatory). Each write is one transaction.

**Filters** are path segments \`<field><operator><value>\` (the \`filters\` parameter), or the same segments in the query string \
(\`?filter=<segment>\`, repeated: the form for generated clients, which encode a path parameter whole); both may be used together. \
**Ordering** is the \`X-API-Result-Order\` header; lists come ${limits.pageSize} records per page (\`page=N\`, or \`?page=N\`).

**Answers** are an envelope: \`request\` (the request as received), \`pagination\` on lists, then \`response\`. Errors have real HTTP \
status codes and \`response\` = \`{"error": "<message>", "code": "<code>"}\`. While requests are limited per certificate, every answer \
carries \`X-RateLimit-*\` and \`RateLimit\` headers, and a refusal 429 with \`Retry-After\`.`;

const strict = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema =>
  ({ type: 'object', required, properties, additionalProperties: false });

const BASE_SCHEMAS: Readonly<Record<string, Schema>> = {
  Request: strict({
    url: { type: 'string', description: 'The request path exactly as received (raw, filters included, no query string).' },
    endpoint: { type: 'string' },
    requested_version: { type: 'string' },
    api_version: { const: 3 },
    request_method: { type: 'string', description: 'The verb, capitalised: `Get`, `Post`, `Put`, `Delete`.' },
    timestamp: { type: 'integer', description: 'Unix seconds.' },
    session: { anyOf: [ref('Session'), { type: 'null' }] },
  }),
  Session: strict({
    hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The session token.' },
    time: { type: 'integer' },
    expiry: { type: 'integer', description: 'Unix seconds; 24 hours after the last use.' },
    company_id: { type: 'integer' },
    user_id: { type: 'integer' },
  }),
  Pagination: strict({ total_pages: { type: 'integer', minimum: 0 }, total_records: { type: 'integer', minimum: 0 } }),
  Error: {
    ...strict({
      request: ref('Request'),
      response: strict({
        error: { type: 'string', description: 'The message.' }, code: { type: 'string' },
        errors: { type: 'array', description: 'With `invalid_rows` only: each refused row of a CSV import (the first 1,000).',
          items: strict({ row: { type: 'integer', minimum: 0 }, field: { type: ['string', 'null'] }, error: { type: 'string' } }) },
      }, ['error', 'code']),
    }, ['response']),
    description: 'A refusal. `request` is missing only when the HTTP parser refused the request before it was read.',
  },
};

/** Health, readiness and this document: outside the versioned API, no certificate needed. */
function servicePaths(ctx: DocContext): Record<string, Schema> {
  const status = (value: string) => strict({ status: { const: value } });
  const get = (id: string, summary: string, schema: Schema): Schema => ({ get: operation(ctx, {
    id, summary, tag: 'service', caller: 'anyone', errors: { 431: ['too_long'] },
    raw: { description: summary, content: { 'application/json': { schema } } },
  }) });
  const ready = get('getReadiness', 'Readiness: the primary database answers, the migrations are applied, the instance is not shutting down',
    status('ok'));
  (ready.get as { responses: Schema }).responses['503'] = {
    description: 'Not ready: the database does not answer, migrations are missing, or the instance is shutting down (and draining)',
    content: { 'application/json': { schema: strict({ status: { const: 'unavailable' }, reason: { type: 'string', description: 'Why, in words.' } }) } },
  };
  return {
    '/healthz': get('getHealth', 'Liveness: the process answers (also while it shuts down)', status('ok')),
    '/readyz': ready,
    '/openapi.json': get('getOpenApiDocument', 'This document', { type: 'object' }),
  };
}

export function openApiDocument(registry: Registry, endpoints: ReadonlyMap<string, Endpoint>, baseUrl: string,
  limits: Limits = DEFAULT_LIMITS): Schema {
  const schemas: Record<string, Schema> = { ...BASE_SCHEMAS };
  const ctx: DocContext = {
    resources: registry.all, internal: registry.internal, lookup: registry.lookup, limits, schemas,
    records: new RecordSchemas(registry.lookup, schemas), errors: new ErrorResponses(),
  };
  const paths: Record<string, Schema> = {};
  const tags: Schema[] = [];
  for (const e of endpoints.values()) {
    const specs = Object.entries(endpointPaths(ctx, e));
    for (const [path, spec] of specs) {
      const operations = Object.entries(spec.operations).map(([method, op]): [string, Schema] => [method, operation(ctx, op, method)]);
      paths[path] = { ...(spec.parameters ? { parameters: spec.parameters } : {}), ...Object.fromEntries(operations) };
    }
    if (specs.length > 0) tags.push({ name: e.name, description: TAG_DESCRIPTIONS[e.name] ?? `The \`${e.name}\` endpoint.` });
  }
  Object.assign(paths, servicePaths(ctx));
  tags.push({ name: 'service', description: 'Health and this document, outside the versioned API: no certificate needed.' });
  return {
    openapi: '3.1.0',
    info: { title: 'Asset Tracking Service', version: '3.0', description: DESCRIPTION(limits), license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: baseUrl, description: 'This service (its BASE_URL)' }],
    tags,
    // A certificate alone (basic mode), or a certificate with a session (impersonation mode).
    security: [{ mutualTLS: [] }, { mutualTLS: [], session: [] }],
    paths,
    components: {
      schemas,
      responses: ctx.errors.components,
      parameters: {
        ResultOrder: RESULT_ORDER, Filter: filterQueryParameter(limits), Page: pageQueryParameter(limits), IfNoneMatch: IF_NONE_MATCH,
        IdempotencyKey: IDEMPOTENCY_KEY, IfMatch: IF_MATCH,
      },
      headers: HEADER_COMPONENTS,
      securitySchemes: {
        mutualTLS: { type: 'mutualTLS', description: 'A self-signed client certificate whose public key the operator registered.' },
        session: { type: 'http', scheme: 'basic',
          description: 'Impersonation mode: the username `session` and, as the password, the token `login` returned; always with the certificate.' },
      },
    },
  };
}
