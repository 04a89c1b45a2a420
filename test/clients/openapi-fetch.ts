// A client made with openapi-typescript (types) and openapi-fetch (calls) from the served
// OpenAPI document, used as an integrator would: test/cli/generated-clients.test.ts
// generates ./openapi-fetch/schema.d.ts beside this file, typechecks it (strict, no casts)
// and runs it against a real `asset-tracker serve`; it prints what it saw as JSON.
import { readFileSync } from 'node:fs';
import createClient from 'openapi-fetch';
import { Agent } from 'undici';
import type { components, paths } from './openapi-fetch/schema.js';

type Asset = components['schemas']['Assets'];

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const fail = (what: string, r: { response: Response; error?: unknown }): never => {
  throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
};

// Mutual TLS: an undici Agent presents the client certificate and trusts the server's.
const dispatcher = new Agent({
  connect: { ca: readFileSync(env('CA_FILE')), cert: readFileSync(env('CERT_FILE')), key: readFileSync(env('KEY_FILE')) },
});
// Lists also answer text/csv: asking for JSON types keeps `data` the JSON envelope.
const api = createClient<paths, 'application/json'>({ baseUrl: env('API_BASE'), requestInitExt: { dispatcher } });
const prefix = env('PREFIX');

const created = await api.PUT('/3.0/assets', { body: [
  { asset_no: `${prefix}1`, status: 'Active', next_check: '2027-01-31', data: { costcode: 'P-10' } },
  { asset_no: `${prefix}2`, status: 'Active', data: { costcode: 'P-20' } },
  { asset_no: `${prefix}3`, status: 'Retired' },
] });
if (!created.data || !('ids' in created.data.response)) throw fail('create', created);
const ids = created.data.response.ids;

// Two filters and a page, in the query string.
const listed = await api.GET('/3.0/assets', {
  params: { query: { filter: ['status=Active', `asset_no~${prefix}`], page: 1 }, header: { 'X-API-Result-Order': 'asset_no' } },
});
if (!listed.data) throw fail('list', listed);
const records: Asset[] = listed.data.response;
const costcode = (a: Asset): unknown => (a.data && typeof a.data === 'object' && !Array.isArray(a.data) ? a.data.costcode : undefined);

// One record by its id (a single path segment), then the same read made conditional.
const one = await api.GET('/3.0/assets/{filters}', { params: { path: { filters: `id=${ids[0]}` } } });
if (!one.data) throw fail('get', one);
const etag = one.response.headers.get('etag') ?? '';
const again = await api.GET('/3.0/assets/{filters}', { params: { path: { filters: `id=${ids[0]}` }, header: { 'If-None-Match': etag } } });

const updated = await api.POST('/3.0/assets', { params: { query: { filter: [`asset_no=${prefix}2`] } }, body: { status: 'Retired' } });
if (!updated.data) throw fail('update', updated);
const deleted = await api.DELETE('/3.0/assets', { params: { query: { filter: [`asset_no=${prefix}3`] } } });
if (!deleted.data) throw fail('delete', deleted);

const changes = await api.GET('/3.0/changes', {
  params: { query: { filter: ['endpoint=assets', `record_id>=${Math.min(...ids)}`, `record_id<=${Math.max(...ids)}`] } },
});
if (!changes.data) throw fail('changes', changes);

// A session: log in through the certificate, then act as the user (HTTP basic, username `session`).
const login = await api.POST('/3.0/login', { body: { username: env('USERNAME'), password: env('PASSWORD') } });
if (!login.data) throw fail('login', login);
const session = { Authorization: `Basic ${Buffer.from(`session:${login.data.response.user_token}`).toString('base64')}` };
const me = await api.GET('/3.0/users', { params: { query: { filter: [`username=${env('USERNAME')}`] } }, headers: session });
if (!me.data) throw fail('users', me);
const out = await api.GET('/3.0/logout', { headers: session });
if (!out.data) throw fail('logout', out);

console.log(JSON.stringify({
  created: ids,
  listed: { assets: records.map((a) => a.asset_no), costcodes: records.map(costcode), pagination: listed.data.pagination },
  byId: { asset_no: one.data.response[0]?.asset_no, etag: etag !== '' },
  conditional: { status: again.response.status, data: again.data ?? null },
  updated: updated.data.response,
  deleted: deleted.data.response,
  changes: changes.data.response.map((c) => `${c.record_id} ${c.op}`),
  session: { user: me.data.response[0]?.username, sessionUser: me.data.request.session?.user_id, logout: out.data.response.message },
}));
await dispatcher.close();
