// A client made with @hey-api/openapi-ts (types, SDK functions and its fetch client) from the
// served OpenAPI document, used as an integrator would: test/cli/generated-clients.test.ts
// generates ./hey-api/ beside this file, typechecks it (strict, no casts) and runs it against
// a real `asset-tracker serve`; it prints what it saw as JSON.
import { readFileSync } from 'node:fs';
import { Agent, setGlobalDispatcher } from 'undici';
import {
  type Assets, createAssets, deleteAssetsByQuery, listAssets, listAssetsFiltered, listChanges, listUsers, login, logout, updateAssetsByQuery,
} from './hey-api/index.js';
import { client } from './hey-api/client.gen.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const fail = (what: string, r: { response: Response; error?: unknown }): never => {
  throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
};

// Mutual TLS: an undici Agent presents the client certificate and trusts the server's; as the global
// dispatcher, it carries every request of Node's fetch, which the client uses.
const dispatcher = new Agent({
  connect: { ca: readFileSync(env('CA_FILE')), cert: readFileSync(env('CERT_FILE')), key: readFileSync(env('KEY_FILE')) },
});
setGlobalDispatcher(dispatcher);
client.setConfig({ baseUrl: env('API_BASE') });
const prefix = env('PREFIX');

const created = await createAssets({ body: [
  { asset_no: `${prefix}1`, status: 'Active', next_check: '2027-01-31', data: { costcode: 'P-10' } },
  { asset_no: `${prefix}2`, status: 'Active', data: { costcode: 'P-20' } },
  { asset_no: `${prefix}3`, status: 'Retired' },
] });
if (!created.data || !('ids' in created.data.response)) throw fail('create', created);
const ids = created.data.response.ids;

// Two filters and a page, in the query string.
const listed = await listAssets({ query: { filter: ['status=Active', `asset_no~${prefix}`], page: 1 }, headers: { 'X-API-Result-Order': 'asset_no' } });
if (!listed.data) throw fail('list', listed);
const records: Assets[] = listed.data.response;
const costcode = (a: Assets): unknown => (a.data && typeof a.data === 'object' && !Array.isArray(a.data) ? a.data.costcode : undefined);

// One record by its id (a single path segment), then the same read made conditional.
const one = await listAssetsFiltered({ path: { filters: `id=${ids[0]}` } });
if (!one.data) throw fail('get', one);
const etag = one.response.headers.get('etag') ?? '';
const again = await listAssetsFiltered({ path: { filters: `id=${ids[0]}` }, headers: { 'If-None-Match': etag } });

const updated = await updateAssetsByQuery({ query: { filter: [`asset_no=${prefix}2`] }, body: { status: 'Retired' } });
if (!updated.data) throw fail('update', updated);
const deleted = await deleteAssetsByQuery({ query: { filter: [`asset_no=${prefix}3`] } });
if (!deleted.data) throw fail('delete', deleted);

const changes = await listChanges({ query: { filter: ['endpoint=assets', `record_id>=${Math.min(...ids)}`, `record_id<=${Math.max(...ids)}`] } });
if (!changes.data) throw fail('changes', changes);

// A session: log in through the certificate, then act as the user (the `session` scheme: HTTP basic, username `session`).
const session = await login({ body: { username: env('USERNAME'), password: env('PASSWORD') } });
if (!session.data) throw fail('login', session);
const auth = `session:${session.data.response.user_token}`;
const me = await listUsers({ query: { filter: [`username=${env('USERNAME')}`] }, auth });
if (!me.data) throw fail('users', me);
const out = await logout({ auth });
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
