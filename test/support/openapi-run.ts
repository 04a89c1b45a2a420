// The scripted part of the tour of test/http/openapi.test.ts: every endpoint with
// real data (created, listed, embedded and hidden records, sessions, moves,
// uploads), and the refusals each can give — bodies, filters, state.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pruneChanges } from '../../src/feed/prune.ts';
import type { Asset, Company, ExternalType, FileRecord, Inserted, LoggedIn, User as UserRecord } from './api.ts';
import type { TestResponse } from './client.ts';
import type { Operation } from './openapi-doc.ts';
import { type Made, PDF, takesQueryFilters, type Tour, withFilters, type World } from './openapi-tour.ts';
import { sessionHeader, type User, uniqueName } from './workflows.ts';

/** A JSON body as a one-record CSV import: its plain members, and `data`'s as `data.<key>` (other objects left out). */
function csvOf(body: Record<string, unknown>): string {
  const cells: [string, unknown][] = Object.entries(body).flatMap(([k, v]): [string, unknown][] => {
    if (k === 'data' && v && typeof v === 'object') return Object.entries(v).map(([dk, dv]) => [`data.${dk}`, dv]);
    return v !== null && typeof v === 'object' ? [] : [[k, v]];
  });
  const quote = (v: unknown) => `"${(v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)).replace(/"/g, '""')}"`;
  return `${cells.map(([k]) => quote(k)).join(',')}\r\n${cells.map(([, v]) => quote(v)).join(',')}\r\n`;
}

/** The id of the first record a PUT inserted. */
const firstId = (res: TestResponse): number => res.reply<Inserted>().ids[0]!;

/** Creates a record of every resource and returns their ids by endpoint. */
async function createAll(w: World): Promise<{ ids: Record<string, number>; made: Made }> {
  const { tour, api } = w;
  const put = async (endpoint: string, body: Record<string, unknown>): Promise<number> => {
    // Where PUT takes CSV, the same record as a checked-only import first.
    if (tour.checker.operationFor('PUT', `/3.0/${endpoint}`)?.op.requestBody?.content['text/csv']) {
      const csv = await tour.expect(200, api, 'PUT', `/3.0/${endpoint}`, { body: csvOf(body), headers: { 'content-type': 'text/csv', 'x-dry-run': 'true' } });
      assert.deepEqual(csv.reply(), { records_valid: 1 });
    }
    return firstId(await tour.expect(201, api, 'PUT', `/3.0/${endpoint}`, { body }));
  };
  const ids: Record<string, number> = {};
  ids.companies = await put('companies', { name: uniqueName('Co'), subdomain: uniqueName('sub'), styles: { color: 'red' }, data: { region: 'north' } });
  await tour.expect(201, api, 'PUT', '/3.0/companies', { body: [{ name: uniqueName('A') }, { name: uniqueName('B'), parent_id: w.sub }] });
  ids.departments = await put('departments', { description: 'Lab', data: { floor: 1 } });
  ids.locations = await put('locations', { description: 'Hall' });
  ids.externaltypes = await put('externaltypes', { description: 'Scale', external_itemtype_id: 7 });
  ids.assets = await put('assets', { asset_no: uniqueName('A-'), serial_no: 'S1', next_check: '2030-01-31', period: 12,
    location_id: ids.locations, department_id: ids.departments, external_type_id: ids.externaltypes, data: { costcode: 'P-10', due: '2030-02-01' } });
  const bare = await put('assets', { asset_no: uniqueName('B-') });
  ids.files = await put('files', { asset_id: ids.assets, description: 'Certificate' });
  ids.assetchecks = await put('assetchecks', { asset_id: ids.assets, check_date: '2026-01-15', performed_by: 'Lab', result: 'pass',
    points: [{ name: 'zero', unit: 'g', lower_limit: -0.1, upper_limit: 0.1, as_found: 0.02, uncertainty: 0.01 }],
    standard_ids: [bare], file_id: ids.files, data: { room: 'B2' } });
  ids.assetreminders = await put('assetreminders', { asset_id: ids.assets, due_date: '2030-01-31', remind_date: '2030-01-01', message: 'Check due' });
  ids.assetqueue = await put('assetqueue', { description: 'New scale', asset_no: uniqueName('Q-'), manufacturer: 'Acme' });
  ids.messages = await put('messages', { messagetext: 'Hello', target_user_id: w.readonly.id });
  await put('messages', { messagetext: 'To everyone', date_range_start: '2020-01-01' });
  ids.users = await put('users', { username: uniqueName('user'), email: `${uniqueName('e')}@example.com`, permissions: { level: 'user' } });
  ids.webhooks = await put('webhooks', { url: 'https://hooks.invalid/in', events: ['*'] });
  ids.auditlog = await put('auditlog', { message: 'Checked by hand', asset_id: ids.assets });
  const [file] = (await tour.expect(200, api, 'GET', `/3.0/files/id=${ids.files}`)).reply<FileRecord[]>();
  const made = { asset: bare, file: ids.files, token: String(file?.upload_endpoint).split('/').pop()!, location: ids.locations, user: ids.users };
  return { ids, made };
}

/** Lists, updates and special reads with real data, in basic mode and from a child company (hidden parent). */
async function readAndUpdate(w: World, ids: Record<string, number>): Promise<void> {
  const { tour, api } = w;
  // The field a list pages by: `id`, or the change feed's `seq`.
  const key = (template: string) => (template.startsWith('/3.0/changes') ? 'seq' : 'id');
  for (const { template, op } of tour.checker.operations()) {
    if (!template.startsWith('/3.0/') || !String(op.operationId).startsWith('list')) continue;
    const order = { headers: { 'x-api-result-order': `${key(template)}^` } };
    await tour.expect(200, api, 'GET', template.replace('{filters}', `${key(template)}>0/page=1`), order);
    if (op.parameters?.some((p) => p.$ref === '#/components/parameters/ResultOrder')) {
      await tour.expect(400, api, 'GET', template, { headers: { 'x-api-result-order': 'no_such_field' } });
    }
    if (template.includes('{filters}')) await tour.expect(400, api, 'GET', template.replace('{filters}', 'no_such_field=1'));
    // The same filters (and page) in the query string, on either path.
    if (!takesQueryFilters(op)) continue;
    await tour.expect(200, api, 'GET', `${template.replace('{filters}', `${key(template)}>0`)}?filter=${key(template)}%3E0&page=1`);
    await tour.expect(400, api, 'GET', `${template.replace('{filters}', `${key(template)}>0`)}?filter=no_such_field%3D1`);
  }
  await tour.expect(200, api, 'GET', '/3.0/assets/data.costcode=P-10/location.description~hal');
  await tour.expect(200, api, 'HEAD', '/3.0/assets');
  await tour.expect(200, w.child, 'GET', '/3.0/companies');
  for (const path of ['/3.0/endpoints', '/3.0/metadata', '/3.0/randompassword']) {
    await tour.expect(200, api, 'GET', path);
    await tour.expect(400, api, 'GET', `${path}/id=1`);
  }
  for (const [endpoint, id] of Object.entries(ids)) {
    const update = tour.checker.operationFor('POST', `/3.0/${endpoint}/id=1`);
    if (update) await tour.expect(200, api, 'POST', `/3.0/${endpoint}/id=${id}`, { body: {} });
    if (update) await tour.expect(200, api, 'POST', `/3.0/${endpoint}?filter=id%3D${id}`, { body: {} });
  }
  await tour.expect(200, api, 'POST', `/3.0/assets/id=${ids.assets}`, { body: { last_check: '2029-01-31', data: { costcode: 'P-11' } } });
  await tour.expect(200, api, 'POST', `/3.0/assetqueue/id=${ids.assetqueue}`, { body: { released: 1 } });
  await tour.expect(200, api, 'POST', `/3.0/messages/id=${ids.messages}`, { body: { message_read: 1 } });
}

/** Sessions: login and its refusals, a session's reads and writes, passwords, logout. */
async function sessions(w: World, made: Made): Promise<void> {
  const { tour, api, admin, readonly } = w;
  const login = async (u: User) => (await tour.expect(200, api, 'POST', '/3.0/login', {
    body: { username: u.username, password: u.password, ip: '10.1.2.3', useragent: null } })).reply<LoggedIn>().user_token;
  const asAdmin = { headers: sessionHeader(await login(admin)) };
  const asReader = { headers: sessionHeader(await login(readonly)) };
  await tour.expect(200, api, 'GET', '/3.0/users', asAdmin);
  await tour.expect(200, api, 'GET', '/3.0/messages', asReader);
  await tour.expect(200, api, 'POST', `/3.0/password/id=${made.user}`, { ...asAdmin, body: { new_password: 'correct horse battery' } });
  await tour.expect(200, api, 'POST', `/3.0/password?filter=id%3D${made.user}`, { ...asAdmin, body: { new_password: 'correct horse battery' } });
  await tour.expect(403, api, 'POST', `/3.0/password/id=${admin.id}`, { ...asReader, body: { new_password: 'correct horse battery' } });
  await tour.expect(403, api, 'POST', `/3.0/password?filter=id%3D${admin.id}`, { ...asReader, body: { new_password: 'correct horse battery' } });
  await tour.expect(400, api, 'POST', `/3.0/password/id=${made.user}`, { ...asAdmin, body: { new_password: 'short' } });
  await tour.expect(400, api, 'POST', '/3.0/password', { ...asAdmin, body: { new_password: 'correct horse battery' } });
  await tour.expect(403, api, 'PUT', '/3.0/assets', { ...asReader, body: { asset_no: 'R-1' } });
  await tour.expect(400, api, 'GET', '/3.0/logout');
  await tour.expect(200, api, 'GET', '/3.0/logout', asReader);
  // Logging out is done by the GET itself: an `If-None-Match: *` still ends the session, and answers 304.
  const again = { headers: { ...sessionHeader(await login(readonly)), 'if-none-match': '*' } };
  await tour.expect(304, api, 'GET', '/3.0/logout', again);
  await tour.expect(401, api, 'GET', '/3.0/logout', again);
  await tour.expect(401, api, 'GET', '/3.0/assets', asReader);
  await tour.expect(400, api, 'POST', '/3.0/login', { body: { username: admin.username, password: admin.password, nosuch: 1 } });
  await tour.expect(400, api, 'POST', '/3.0/login', { body: { username: 5, password: admin.password } });
  await tour.expect(400, api, 'POST', '/3.0/login', { body: '{"username":' });
  await tour.expect(403, api, 'POST', '/3.0/login', { body: { username: admin.username, password: admin.password, ikey: 'k' } });
  await tour.expect(403, w.child, 'POST', '/3.0/login', { body: { username: admin.username, password: admin.password } });
  await tour.expect(400, api, 'POST', '/3.0/login/id=1', { body: { username: admin.username, password: admin.password } });
  await tour.expect(401, api, 'POST', '/3.0/login', { body: { username: readonly.username, password: 'wrong password' } });
  await tour.expect(429, api, 'POST', '/3.0/login', { body: { username: readonly.username, password: 'wrong password' } });
}

/** Moving an asset, and its refusals. */
async function moves(w: World, made: Made): Promise<void> {
  const { tour, api } = w;
  const twin = uniqueName('T-');
  const here = firstId(await tour.expect(201, api, 'PUT', '/3.0/assets', { body: { asset_no: twin } }));
  await tour.expect(201, api, 'PUT', '/3.0/assets', { body: { asset_no: twin, company_id: w.sub } });
  await tour.expect(409, api, 'POST', '/3.0/moveasset', { body: { asset_id: here, company_id: w.sub } });
  await tour.expect(200, api, 'POST', '/3.0/moveasset', { body: { asset_id: made.asset, company_id: w.sub } });
  await tour.expect(400, api, 'POST', '/3.0/moveasset', { body: { asset_id: 99999999, company_id: w.sub } });
  await tour.expect(400, api, 'POST', '/3.0/moveasset', { body: { asset_id: made.asset, company_id: w.sub, nosuch: 1 } });
  await tour.expect(400, api, 'POST', '/3.0/moveasset', { body: '[]' });
  await tour.expect(400, api, 'POST', `/3.0/moveasset/id=${made.asset}`, { body: { asset_id: made.asset, company_id: w.top } });
}

/** File content: store, download, and each refusal. */
async function uploads(w: World, made: Made): Promise<void> {
  const { tour, api, blobs } = w;
  const at = `/3.0/upload/${made.token}`;
  await tour.expect(200, api, 'POST', at, { body: PDF, headers: { 'content-type': 'application/pdf' } });
  await tour.expect(200, api, 'GET', at);
  await tour.expect(415, api, 'POST', at, { body: 'plain text, not a document' });
  await tour.expect(404, api, 'POST', `/3.0/upload/${randomUUID()}`, { body: PDF });
  await tour.expect(404, api, 'GET', `/3.0/upload/${randomUUID()}`);
  await tour.expect(413, api, 'POST', at, { body: Buffer.concat([PDF, Buffer.alloc(w.uploadMaxBytes)]) });
  blobs.failing = true;
  await tour.expect(503, api, 'POST', at, { body: PDF });
  await tour.expect(503, api, 'GET', at);
  blobs.failing = false;
}

/** The refusals of resource operations with bodies, filters and state. */
async function refusals(w: World, ids: Record<string, number>, made: Made): Promise<void> {
  const { tour, api } = w;
  const tooMany = JSON.stringify(Array.from({ length: 1001 }, () => ({})));
  for (const { template, method, op } of tour.checker.operations()) {
    if (!template.startsWith('/3.0/') || template.startsWith('/3.0/password') || template.startsWith('/3.0/upload')) continue;
    const filtered = withFilters(template, op, 'id=99999999');
    const unfiltered = template.replace('/{filters}', '');
    const unknownField = withFilters(template, op, 'no_such_field=1');
    const takesFilters = template.includes('{filters}') || (method !== 'get' && takesQueryFilters(op));
    if (method === 'put' && op.responses['400']) {
      await tour.expect(400, api, 'PUT', template, { body: { no_such_field: 1 } });
      await tour.expect(400, api, 'PUT', template, { body: '{"a":' });
      await tour.expect(400, api, 'PUT', template, { body: tooMany });
      await tour.expect(400, api, 'PUT', `${template}/id=1`, { body: {} });
      await tour.expect(400, api, 'PUT', template, { body: { [wrongTyped(tour, op)]: [] } });
    }
    if (method === 'post' && takesFilters) {
      await tour.expect(400, api, 'POST', filtered, { body: { no_such_field: 1 } });
      await tour.expect(400, api, 'POST', filtered, { body: '[]' });
      await tour.expect(400, api, 'POST', unfiltered, { body: {} });
      await tour.expect(400, api, 'POST', unknownField, { body: {} });
      const field = wrongTyped(tour, op);
      if (field) await tour.expect(400, api, 'POST', filtered, { body: { [field]: [] } });
    }
    if (method === 'delete') {
      await tour.expect(200, api, 'DELETE', filtered);
      await tour.expect(400, api, 'DELETE', unfiltered);
      await tour.expect(400, api, 'DELETE', unknownField);
    }
  }
  const [asset] = (await tour.expect(200, api, 'GET', `/3.0/assets/id=${ids.assets}`)).reply<Asset[]>();
  // The printed lists: a PDF answer is documented for them.
  for (const path of [`/3.0/assets/id=${ids.assets}`, '/3.0/assetchecks']) {
    const pdf = await tour.send(api, 'GET', path, { headers: { accept: 'application/pdf' } });
    assert.equal(pdf.headers['content-type'], 'application/pdf', `${path}: ${pdf.status}`);
  }
  await tour.expect(409, api, 'PUT', '/3.0/assets', { body: { asset_no: asset?.asset_no } });
  const other = firstId(await tour.expect(201, api, 'PUT', '/3.0/assets', { body: { asset_no: uniqueName('O-') } }));
  await tour.expect(409, api, 'POST', `/3.0/assets/id=${other}`, { body: { asset_no: asset?.asset_no } });
  await conflicts(w, ids, made);
  await tour.expect(200, api, 'DELETE', `/3.0/messages/id=${ids.messages}`);
  // Neither an operation nor a version of the document: refusals with the error body.
  for (const [method, path] of [['GET', '/3.0/nosuch'], ['GET', '/2.0/assets'], ['PATCH', '/3.0/assets'], ['OPTIONS', '/3.0/assets'],
    ['POST', '/3.0/endpoints']] as const) {
    await tour.send(api, method, path);
  }
}

/** Writes refused by the state of the store (409): unique values, references that block a delete, state changes. */
async function conflicts(w: World, ids: Record<string, number>, made: Made): Promise<void> {
  const { tour, api } = w;
  const one = async <R>(endpoint: string, id: number | undefined): Promise<R> => {
    const [record] = (await tour.expect(200, api, 'GET', `/3.0/${endpoint}/id=${id}`)).reply<R[]>();
    assert.ok(record, `${endpoint} ${id}`);
    return record;
  };
  const { subdomain } = await one<Company>('companies', ids.companies);
  await tour.expect(409, api, 'PUT', '/3.0/companies', { body: { name: uniqueName('Co'), subdomain } });
  await tour.expect(409, api, 'POST', `/3.0/companies/id=${w.sub}`, { body: { subdomain } });
  const { external_itemtype_id } = await one<ExternalType>('externaltypes', ids.externaltypes);
  await tour.expect(409, api, 'PUT', '/3.0/externaltypes', { body: { description: 'Twin', external_itemtype_id } });
  const twin = firstId(await tour.expect(201, api, 'PUT', '/3.0/externaltypes', { body: { external_itemtype_id: 1000 } }));
  await tour.expect(409, api, 'POST', `/3.0/externaltypes/id=${twin}`, { body: { external_itemtype_id } });
  const { username } = await one<UserRecord>('users', made.user);
  await tour.expect(409, api, 'PUT', '/3.0/users', { body: { username, email: 'twin@example.com' } });
  await tour.expect(409, api, 'POST', `/3.0/users/id=${w.admin.id}`, { body: { username } });
  await tour.expect(201, api, 'PUT', '/3.0/assetreminders', { body: { asset_id: ids.assets, user_id: made.user, due_date: '2030-01-31', remind_date: '2030-01-02' } });
  await tour.expect(409, api, 'DELETE', `/3.0/users/id=${made.user}`);
  await tour.expect(409, api, 'DELETE', `/3.0/assets/id=${ids.assets}`);
  for (const endpoint of ['departments', 'externaltypes']) await tour.expect(409, api, 'DELETE', `/3.0/${endpoint}/id=${ids[endpoint]}`);
  await tour.expect(409, api, 'DELETE', `/3.0/locations/id=${made.location}`);
  await tour.expect(409, api, 'DELETE', `/3.0/companies/id=${w.top}`);
  await tour.expect(409, api, 'POST', `/3.0/assetqueue/id=${ids.assetqueue}`, { body: { released: 2 } });
}

/** The first body field whose schema refuses an empty array (a field of another type). */
function wrongTyped(tour: Tour, op: Operation): string {
  const body = op.requestBody?.content['application/json']?.schema;
  const ref = body?.oneOf?.[0]?.$ref ?? body?.$ref ?? '';
  const schema = tour.checker.doc.components.schemas[ref.split('/').pop()!];
  return Object.entries(schema?.properties ?? {}).find(([, s]) => Object.keys(s).length > 0 && s.type !== 'object'
    && !(typeof s.type === 'object' && s.type.includes('array')))?.[0] ?? '';
}

/** The scripted part of the tour. */
export async function run(w: World): Promise<Made> {
  const { tour, anonymous } = w;
  for (const path of ['/healthz', '/readyz', '/openapi.json']) await tour.expect(200, anonymous, 'GET', path);
  const { ids, made } = await createAll(w);
  await readAndUpdate(w, ids);
  await sessions(w, made);
  await moves(w, made);
  await uploads(w, made);
  await refusals(w, ids, made);
  await pruned(w);
  return made;
}

/** Last, as it ends the feed's past: changes pruned, a cursor below them is refused. */
async function pruned(w: World): Promise<void> {
  await sql`UPDATE events SET created = '2000-01-01 00:00:00'`.execute(w.svc.database.db);
  await pruneChanges(w.svc.database, 30, w.svc.clock.now());
  await w.tour.expect(410, w.api, 'GET', '/3.0/changes/seq>0');
  await w.tour.expect(410, w.api, 'GET', '/3.0/changes?filter=seq%3E0');
}
