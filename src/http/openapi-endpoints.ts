// The paths of each endpoint: resource endpoints get the generic operations of
// their definition; the endpoints that answer their own way (login, upload, …)
// are described here; any other endpoint gets a plain description of its verbs.
import { PASSWORD_MAX, PASSWORD_MIN } from '../auth/passwords.ts';
import type { ErrorCode } from '../errors.ts';
import type { Verb } from '../model/types.ts';
import { V3_ENDPOINTS } from '../resources/endpoints.ts';
import { rateLimitHeaders } from './openapi-errors.ts';
import {
  CREATED, type DocContext, errorsOf, jsonBody, type Operations, type OperationSpec, resourceOperations, UPDATED,
} from './openapi-operations.ts';
import { filtersParameter } from './openapi-parameters.ts';
import { inputSchema, pascal, ref, type Schema } from './openapi-schemas.ts';
import type { Endpoint } from '../engine/types.ts';

/** A path's operations and the parameters they share. */
export interface PathSpec { readonly operations: Operations; readonly parameters?: readonly Schema[] }

const single = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema =>
  ({ type: 'object', required, properties, additionalProperties: false });

/** An array of exactly one object: how the v3.0 API answers these reads. */
const oneRow = (item: Schema): Schema => ({ type: 'array', minItems: 1, maxItems: 1, items: item });

const CUSTOM_KEY: Schema = single({
  display_name: { type: 'string' },
  type: { enum: ['int', 'bool', 'string', 'datetime', 'date', 'options'] },
  visible: { type: 'boolean', description: 'false for keys starting with `$`, which are meant for the API only' },
  constraints: { description: 'as the company declared it in `data.custom_fields`' },
  options: { description: 'as the company declared it in `data.custom_fields`' },
}, ['display_name', 'type', 'visible']);

const optionalText = { type: ['string', 'null'], maxLength: 1024 };

/** Endpoints without filters refuse any segment after their name. */
const NO_FILTERS: readonly ErrorCode[] = ['invalid_filter'];

type Special = (ctx: DocContext, e: Endpoint) => Record<string, PathSpec>;

const SPECIAL: Readonly<Record<string, Special>> = {
  endpoints: () => ({
    '/3.0/endpoints': { operations: { get: {
      id: 'listEndpoints', tag: 'endpoints', summary: 'List the v3.0 endpoints', need: 'readonly', paginated: true,
      description: 'Exactly the v3.0 names, sorted, with `pagination` 0/0; extensions are listed in this document only.',
      response: { type: 'array', items: { enum: [...V3_ENDPOINTS] } }, errors: errorsOf({ bad: NO_FILTERS }),
    } } },
  }),
  metadata: (ctx) => {
    ctx.schemas.CustomKey = CUSTOM_KEY;
    const endpoints = ctx.resources.filter((d) => d.fields.some((f) => f.name === 'data' && f.type === 'json')).map((d) => d.name);
    return { '/3.0/metadata': { operations: { get: {
      id: 'getMetadata', tag: 'metadata', summary: 'Describe the custom keys of each endpoint\'s `data`', need: 'readonly', paginated: true,
      description: 'One object: endpoint → key → description, from the keys seen in the caller\'s records and those its company declared.',
      response: oneRow(single(Object.fromEntries(endpoints.map((name) => [name, { type: 'object', additionalProperties: ref('CustomKey') }])))),
      errors: errorsOf({ bad: NO_FILTERS }),
    } } } };
  },
  randompassword: () => ({
    '/3.0/randompassword': { operations: { get: {
      id: 'getRandomPassword', tag: 'randompassword', summary: 'Suggest a random password', need: 'readonly', paginated: true,
      response: oneRow(single({ randompassword: { type: 'string', minLength: 16, maxLength: 16 } })), errors: errorsOf({ bad: NO_FILTERS }),
    } } },
  }),
  login: () => ({
    '/3.0/login': { operations: { post: {
      id: 'login', tag: 'login', summary: 'Open a session', caller: 'certificate',
      description: 'Needs a certificate registered with impersonation. Later calls send the token as HTTP basic credentials '
        + '`session:<token>`. After a failed login, the username is refused for a delay that doubles per failure (429).',
      body: jsonBody(single({
        username: { type: 'string', maxLength: 1024 }, password: { type: 'string', maxLength: 1024, writeOnly: true },
        ip: { ...optionalText, description: 'the end user\'s address, recorded in the audit entry' }, useragent: optionalText,
      }, ['username', 'password']), 'The user\'s credentials.'),
      response: single({ message: { const: 'Authentication successful' }, user_token: { type: 'string', pattern: '^[0-9a-f]{64}$' } }),
      // Its reply is a token, which is never stored: a login is not kept for a retry.
      keyed: false,
      errors: errorsOf({ bad: [...NO_FILTERS, 'invalid_field', 'invalid_value', 'malformed_json'], unauthorized: ['no_access', 'bad_login'],
        body: true, more: { 403: ['forbidden'] } }),
    } } },
  }),
  logout: () => ({
    '/3.0/logout': { operations: { get: {
      id: 'logout', tag: 'logout', summary: 'End the session of the request', caller: 'session',
      response: single({ message: { const: 'Session logged out' } }), errors: errorsOf({ bad: ['no_session', ...NO_FILTERS] }),
    } } },
  }),
  password: (ctx) => {
    const set = (byQuery: boolean): OperationSpec => ({
      id: `setPassword${byQuery ? 'ByQuery' : ''}`, tag: 'password', need: 'readonly',
      summary: `Set the password of every user matching the filters${byQuery ? ' (filters in the query string)' : ''}`,
      description: 'Ends the users\' other sessions. Below `admin`, a session may only match its own user.',
      parameters: [{ $ref: '#/components/parameters/Filter' }],
      body: jsonBody(single({ new_password: { type: 'string', minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, writeOnly: true } }),
        'The new password.'),
      response: UPDATED,
      ifMatch: true,
      errors: errorsOf({ bad: ['invalid_filter', 'filter_required', 'invalid_field', 'invalid_value', 'malformed_json'],
        body: true, long: !byQuery, more: { 403: ['forbidden'] } }),
    });
    return {
      '/3.0/password': { operations: { post: set(true) } },
      '/3.0/password/{filters}': {
        parameters: [filtersParameter(ctx, ctx.lookup('users'), 'Here they choose the users, as on `users`.')],
        operations: { post: set(false) },
      },
    };
  },
  moveasset: (ctx, e) => ({
    '/3.0/moveasset': { operations: { post: {
      id: 'moveAsset', tag: 'moveasset', summary: 'Move an asset, with its files and reminders, to another company', need: e.access.POST,
      description: 'References to the old company\'s location, department and external type are cleared. `response` holds the moved asset. '
        + '`If-Match` speaks of the asset (the ETag of `GET /3.0/assets/id=<asset_id>`, or its version).',
      ifMatch: true,
      body: jsonBody(single({ asset_id: inputSchema({ name: 'asset_id', type: 'int' }, ctx.limits),
        company_id: inputSchema({ name: 'company_id', type: 'int' }, ctx.limits) }), 'The asset and the company to move it to.'),
      response: oneRow(ref(ctx.records.record(ctx.lookup('assets')))),
      errors: errorsOf({ bad: [...NO_FILTERS, 'invalid_field', 'invalid_value', 'malformed_json'], need: e.access.POST, conflict: true, body: true }),
    } } },
  }),
  upload: (_ctx, e) => ({
    '/3.0/upload/{token}': {
      parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string', format: 'uuid' },
        description: 'The file record\'s token: the last segment of its `upload_endpoint`.' }],
      operations: {
        post: {
          id: 'uploadFile', tag: 'upload', summary: 'Store the content of a file record', need: e.access.POST,
          description: 'The raw bytes are the body, whatever the Content-Type; the type (PDF, PNG, GIF or JPEG) is detected from them. '
            + 'Replacing existing content needs basic mode or an `admin` session.',
          body: { required: true, description: 'The file\'s bytes.', content: { 'application/octet-stream': {} } },
          response: UPDATED,
          // The same bytes stored again change nothing: no Idempotency-Key is needed, and none is read.
          keyed: false,
          errors: errorsOf({ need: e.access.POST, body: true, more: { 403: ['forbidden'], 404: ['not_found'], 415: ['bad_file_type'], 503: ['storage'] } }),
        },
        get: {
          id: 'downloadFile', tag: 'upload', summary: 'Download the content of a file record', need: e.access.GET,
          raw: {
            description: 'The stored bytes, with the type detected at upload.',
            headers: {
              ...rateLimitHeaders(),
              'Content-Disposition': { required: true, description: '`attachment` with the record\'s filename', schema: { type: 'string' } },
              'X-Content-Type-Options': { required: true, schema: { const: 'nosniff' } },
            },
            content: Object.fromEntries(['application/pdf', 'image/png', 'image/gif', 'image/jpeg'].map((t) => [t, {}])),
          },
          errors: errorsOf({ need: e.access.GET, more: { 404: ['not_found'], 503: ['storage'] } }),
        },
      },
    },
  }),
};

/** Resource endpoints that answer a verb their own way. */
const OVERRIDES: Readonly<Record<string, (paths: { plain: Operations; filtered: Operations }) => void>> = {
  assetqueue({ plain, filtered }) {
    // Releasing and rejecting entries follow a state machine.
    for (const ops of [plain, filtered]) if (ops.post) ops.post = { ...ops.post, errors: { ...ops.post.errors, 409: ['data_error'] } };
  },
  auditlog({ plain: ops }) {
    if (!ops.put) return;
    ops.put = { ...ops.put, id: 'addAuditNote', summary: 'Add notes to the audit log',
      description: 'Each object is a note (`message`), about an asset of the scope when `asset_id` is given. Entries are never changed or removed.' };
  },
  webhooks({ plain: ops }) {
    if (!ops.put) return;
    const secrets = { type: 'array', items: { type: 'string' }, description: 'each new webhook\'s secret, in the order of `ids`; shown only here' };
    ops.put = { ...ops.put, response: { ...CREATED, required: [...CREATED.required as string[], 'secrets'],
      properties: { ...CREATED.properties as Schema, secrets } } };
  },
};

const VERBS: readonly Verb[] = ['GET', 'POST', 'PUT', 'DELETE'];

/** An endpoint this document knows nothing more about: its verbs, with the envelope. */
function plainOperations(e: Endpoint): Record<string, PathSpec> {
  const operations: Operations = {};
  for (const verb of VERBS.filter((v) => e.handlers[v])) {
    const method = verb.toLowerCase() as keyof Operations;
    const need = e.access[verb] ?? 'admin';
    operations[method] = { id: `${method}${pascal(e.name)}`, tag: e.name, summary: `${verb} ${e.name}`, need,
      errors: errorsOf({ bad: ['invalid_filter', 'invalid_field', 'invalid_value', 'malformed_json'], need, body: verb === 'POST' || verb === 'PUT' }) };
  }
  return { [`/3.0/${e.name}`]: { operations } };
}

export function endpointPaths(ctx: DocContext, e: Endpoint): Record<string, PathSpec> {
  const special = SPECIAL[e.name];
  if (special) return special(ctx, e);
  const def = ctx.resources.find((d) => d.name === e.name);
  if (!def) return plainOperations(e);
  const { plain, filtered } = resourceOperations(ctx, e, def);
  OVERRIDES[e.name]?.({ plain, filtered });
  const out: Record<string, PathSpec> = {};
  if (Object.keys(plain).length > 0) out[`/3.0/${e.name}`] = { operations: plain };
  const uses = [filtered.get && 'narrow a list (GET)', filtered.post && 'choose the records to update (POST)',
    filtered.delete && 'choose the records to delete (DELETE)'].filter((v): v is string => typeof v === 'string');
  if (uses.length > 0) {
    out[`/3.0/${e.name}/{filters}`] = { operations: filtered,
      parameters: [filtersParameter(ctx, def, `Here they ${uses.join(', ')}.`)] };
  }
  return out;
}

/** One line per endpoint for the document's tags. */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  endpoints: 'The v3.0 endpoint list.',
  assets: 'Assets and their check dates.',
  companies: 'The company tree that scopes every request.',
  departments: 'Departments of a company.',
  locations: 'Locations of a company.',
  externaltypes: 'Item types of an external system.',
  assetqueue: 'Assets waiting for approval.',
  assetreminders: 'Reminders of due check dates.',
  files: 'File references of assets.',
  upload: 'File content.',
  auditlog: 'The append-only audit log.',
  messages: 'Messages to users.',
  users: 'Users, for impersonation mode.',
  password: 'Users\' passwords.',
  login: 'Opening a session.',
  logout: 'Ending a session.',
  metadata: 'The custom keys of `data` fields.',
  moveasset: 'Moving an asset to another company.',
  randompassword: 'Password suggestions.',
  webhooks: 'Receivers of events.',
  webhookdeliveries: 'The delivery log of webhooks.',
};
