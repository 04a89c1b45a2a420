// The wire protocol on both engines: the envelope byte for byte, every
// message of the error table that needs no session or upload, the transport rules
// of the transport, bodies, verbs, limits, dynamic JSON order and audit
// entries written in the same transaction as the change.
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { TestCert } from '../support/certs.ts';
import { type TestClient, type TestResponse, testResponse } from '../support/client.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import type { Endpoint } from '../../src/engine/types.ts';
import type { ListPath, Asset, Inserted, Records } from '../support/api.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const ENDPOINTS = ['assetqueue', 'assetreminders', 'assets', 'auditlog', 'companies', 'departments', 'endpoints', 'externaltypes',
  'files', 'locations', 'login', 'logout', 'messages', 'password', 'upload', 'users'];

type Counted = 'assets' | 'auditlog' | 'locations' | 'messages' | 'users';

async function count(svc: Service, table: Counted): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${sql.table(table)}`.execute(svc.database.db);
  return Number(rows[0]!.n);
}

/** The `request` member exactly as the envelope writes it. */
function requestText(svc: Service, url: string, endpoint: string, method: string, version = '3.0'): string {
  const t = Math.floor(svc.clock.now().getTime() / 1000);
  return `{"url":${JSON.stringify(url)},"endpoint":${JSON.stringify(endpoint)},"requested_version":${JSON.stringify(version)},`
    + `"api_version":3,"request_method":${JSON.stringify(method)},"timestamp":${t},"session":null}`;
}

function expectError(r: TestResponse, status: number, code: string, message: string): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.headers['content-type'], JSON_TYPE);
  assert.deepEqual(Object.keys(r.envelope), ['request', 'response']);
  assert.deepEqual(r.envelope.response, { error: message, code });
}

/** For messages whose detail (XXXX) the contract leaves open. */
function expectErrorPrefix(r: TestResponse, status: number, code: string, prefix: string): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.headers['content-type'], JSON_TYPE);
  assert.deepEqual(Object.keys(r.errorReply), ['error', 'code']);
  assert.equal(r.errorReply.code, code);
  assert.ok(r.errorReply.error.startsWith(prefix), r.text);
  assert.ok(r.errorReply.error.length > prefix.length, r.text);
}

function expectOk<R = unknown>(r: TestResponse, status = 200): R {
  assert.equal(r.status, status, r.text);
  assert.equal(r.headers['content-type'], JSON_TYPE);
  return r.reply<R>();
}

const allowOf = (r: TestResponse) => new Set(String(r.headers.allow ?? '').split(/\s*,\s*/).filter(Boolean));

/** A request over TLS with a chunked body (no Content-Length). */
function chunkedPut(port: number, cert: TestCert, path: string, chunks: readonly string[]): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, method: 'PUT', path, agent: false, rejectUnauthorized: false,
      cert: cert.certPem, key: cert.keyPem, headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
        const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve(testResponse(res.statusCode ?? 0, res.headers, text));
      });
      });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

for (const kind of DB_KINDS) {
  describe(`protocol (${kind})`, () => {
    let svc: Service;
    let company: number;
    let api: TestClient;

    const put = async (endpoint: string, body: unknown): Promise<number[]> => expectOk<Inserted>(await api.put(`/3.0/${endpoint}`, body), 201).ids;
    const list = async <E extends keyof Records>(path: ListPath<E>): Promise<Records[E][]> => expectOk(await api.get(`/3.0/${path}`));
    /** Runs `f` and asserts it changed none of the tables. */
    async function writesNothing(f: () => Promise<void>, tables: readonly Counted[] = ['assets', 'auditlog', 'locations', 'messages', 'users']) {
      const before = await Promise.all(tables.map((t) => count(svc, t)));
      await f();
      assert.deepEqual(await Promise.all(tables.map((t) => count(svc, t))), before, `unchanged ${tables.join(', ')}`);
    }

    before(async () => {
      svc = await startService(kind);
      company = await svc.company('Acme');
      ({ client: api } = await svc.certificate(company));
    });
    after(() => svc.close());

    // ---- envelope ----------------------------------------------------------

    it('GET: the envelope byte for byte, members in the order request, pagination, response', async () => {
      const r = await api.get('/3.0/endpoints');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], JSON_TYPE);
      assert.equal(r.text, `{"request":${requestText(svc, '/3.0/endpoints', 'endpoints', 'Get')},`
        + `"pagination":{"total_pages":0,"total_records":0},"response":${JSON.stringify(ENDPOINTS)}}`);
    });

    it('url is the raw path with its filters and without the query string', async () => {
      const [id] = await put('assets', { asset_no: 'A B+C', description: 'x/y' });
      const path = '/3.0/assets/asset_no=A+B%2BC/id>0/description%7E%2F';
      const r = await api.get(`${path}?filter=id%3E0&asset_no=nothing`);
      assert.equal(r.status, 200, r.text);
      assert.ok(r.text.startsWith(`{"request":${requestText(svc, path, 'assets', 'Get')},"pagination":{"total_pages":1,"total_records":1},"response":[{"id":${id},`), r.text);
      assert.deepEqual(Object.keys(r.envelope), ['request', 'pagination', 'response']);
      assert.deepEqual(Object.keys(r.envelope.request), ['url', 'endpoint', 'requested_version', 'api_version', 'request_method', 'timestamp', 'session']);
    });

    it('PUT, POST and DELETE: the envelope byte for byte, without pagination, request_method capitalised', async () => {
      const p = await api.put('/3.0/locations', { description: 'Envelope' });
      assert.equal(p.status, 201);
      assert.equal(p.headers['content-type'], JSON_TYPE);
      const id = p.reply<Inserted>().ids[0]!;
      assert.equal(p.text, `{"request":${requestText(svc, '/3.0/locations', 'locations', 'Put')},"response":{"records_inserted":1,"ids":[${id}]}}`);
      const u = await api.post(`/3.0/locations/id=${id}`, { description: 'Envelope 2' });
      assert.equal(u.status, 200);
      assert.equal(u.text, `{"request":${requestText(svc, `/3.0/locations/id=${id}`, 'locations', 'Post')},"response":{"records_updated":1,"records_found":1}}`);
      const d = await api.delete(`/3.0/locations/id=${id}`);
      assert.equal(d.status, 200);
      assert.equal(d.text, `{"request":${requestText(svc, `/3.0/locations/id=${id}`, 'locations', 'Delete')},"response":{"records_deleted":1,"records_found":1}}`);
    });

    it('errors: the envelope byte for byte, without pagination', async () => {
      const r = await api.get('/3.0/XXXX/id=1');
      assert.equal(r.status, 404);
      assert.equal(r.headers['content-type'], JSON_TYPE);
      assert.equal(r.text, `{"request":${requestText(svc, '/3.0/XXXX/id=1', 'XXXX', 'Get')},`
        + '"response":{"error":"Endpoint XXXX does not exist","code":"no_endpoint"}}');
      const v = await api.delete('/2.0/assets/id=1');
      assert.equal(v.text, `{"request":${requestText(svc, '/2.0/assets/id=1', 'assets', 'Delete', '2.0')},`
        + '"response":{"error":"API version 2.0 is not supported","code":"no_version"}}');
    });

    // ---- the error table -----------------------------------------------------------------

    it('invalid_filter: unknown field, wrong type, bad escape, page=0, a filter on PUT, a NUL; XXXX is the raw segment', async () => {
      expectError(await api.get('/3.0/assets/idd=3'), 400, 'invalid_filter', 'Invalid filter definition: idd=3');
      expectError(await api.get('/3.0/assets/id=abc'), 400, 'invalid_filter', 'Invalid filter definition: id=abc');
      expectError(await api.get('/3.0/assets/description=%ZZ'), 400, 'invalid_filter', 'Invalid filter definition: description=%ZZ');
      expectError(await api.get('/3.0/assets/ASSET_NO=X'), 400, 'invalid_filter', 'Invalid filter definition: ASSET_NO=X');
      expectError(await api.get('/3.0/assets/next_check=2021-02-30'), 400, 'invalid_filter', 'Invalid filter definition: next_check=2021-02-30');
      expectError(await api.get('/3.0/assets/page=0'), 400, 'invalid_filter', 'Invalid filter definition: page=0');
      expectError(await api.get('/3.0/assets/asset_no=%00'), 400, 'invalid_filter', 'Invalid filter definition: asset_no=%00');
      expectError(await api.get('/3.0/assets/%3Dx'), 400, 'invalid_filter', 'Invalid filter definition: %3Dx');
      expectError(await api.get('/3.0/assets/asset_no'), 400, 'invalid_filter', 'Invalid filter definition: asset_no');
      await writesNothing(async () => {
        expectError(await api.put('/3.0/assets/id=1', { asset_no: 'FILTERED' }), 400, 'invalid_filter', 'Invalid filter definition: id=1');
      });
    });

    it('filter_required: POST and DELETE without filters (page does not count), nothing changes', async () => {
      await put('assets', { asset_no: 'FR-1' });
      await writesNothing(async () => {
        const update = 'No fields specified for record updating. This would update ALL assets records for your company. Request aborted.';
        const remove = 'No fields specified for record deletion. This would delete ALL assets records for your company. Request aborted.';
        expectError(await api.post('/3.0/assets', { status: 'Gone' }), 400, 'filter_required', update);
        expectError(await api.post('/3.0/assets/', { status: 'Gone' }), 400, 'filter_required', update);
        expectError(await api.delete('/3.0/assets'), 400, 'filter_required', remove);
        expectError(await api.delete('/3.0/locations'), 400, 'filter_required',
          'No fields specified for record deletion. This would delete ALL locations records for your company. Request aborted.');
      });
      assert.equal((await list('assets/status=Gone')).length, 0);
    });

    it('invalid_field: unknown and non-writable fields, nothing written', async () => {
      const [id] = await put('assets', { asset_no: 'IF-1' });
      await writesNothing(async () => {
        expectError(await api.put('/3.0/assets', { asset_no: 'IF-2', bogus: 1 }), 400, 'invalid_field', 'Field verification failed, invalid field bogus');
        expectError(await api.put('/3.0/assets', { asset_no: 'IF-2', id: 99 }), 400, 'invalid_field', 'Field verification failed, invalid field id');
        expectError(await api.put('/3.0/assets', { asset_no: 'IF-2', date_added: '2020-01-01' }), 400, 'invalid_field',
          'Field verification failed, invalid field date_added');
        expectError(await api.put('/3.0/assets', { asset_no: 'IF-2', modified: '2020-01-01 00:00:00' }), 400, 'invalid_field',
          'Field verification failed, invalid field modified');
        expectError(await api.post(`/3.0/assets/id=${id}`, { company_id: company }), 400, 'invalid_field',
          'Field verification failed, invalid field company_id');
        expectError(await api.put('/3.0/users', { username: 'u-if', email: 'u@example.com', password: 'secret-secret' }), 400, 'invalid_field',
          'Field verification failed, invalid field password');
      });
    });

    it('invalid_value: wrong type or format, a reference that does not exist; nothing written', async () => {
      await writesNothing(async () => {
        expectError(await api.put('/3.0/assets', { asset_no: 'IV', period: 'abc' }), 400, 'invalid_value', 'Field verification failed, invalid value for period');
        expectError(await api.put('/3.0/assets', { asset_no: 'IV', next_check: '2021-02-30' }), 400, 'invalid_value',
          'Field verification failed, invalid value for next_check');
        expectError(await api.put('/3.0/assets', { asset_no: 'IV', serial_no: 5 }), 400, 'invalid_value', 'Field verification failed, invalid value for serial_no');
        expectError(await api.put('/3.0/assets', { asset_no: 'IV', location_id: 999999 }), 400, 'invalid_value',
          'Field verification failed, invalid value for location_id');
        expectError(await api.put('/3.0/users', { username: 'iv', email: 'not an address' }), 400, 'invalid_value',
          'Field verification failed, invalid value for email');
      });
    });

    it('malformed_json: bad JSON, empty body, [] to PUT, an array or a scalar to POST; nothing written', async () => {
      const [id] = await put('assets', { asset_no: 'MJ-1' });
      const prefix = 'Malformed JSON body: ';
      await writesNothing(async () => {
        expectErrorPrefix(await api.put('/3.0/assets', '{"asset_no":'), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.put('/3.0/assets', "{'asset_no':'x'}"), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.put('/3.0/assets', '{"asset_no":"x"} trailing'), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.put('/3.0/assets', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.put('/3.0/assets', ''), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.request('PUT', '/3.0/assets'), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.put('/3.0/assets', '[]'), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.put('/3.0/assets', '[1]'), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.put('/3.0/assets', '"asset"'), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.post(`/3.0/assets/id=${id}`, '[{"status":"x"}]'), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.post(`/3.0/assets/id=${id}`, '[]'), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.post(`/3.0/assets/id=${id}`, ''), 400, 'malformed_json', prefix);
        expectErrorPrefix(await api.post(`/3.0/assets/id=${id}`, 'null'), 400, 'malformed_json', prefix);
      });
    });

    it('malformed_order: XXXX is the header as sent; the header is ignored on other verbs', async () => {
      expectError(await api.get('/3.0/assets', { headers: { 'X-API-Result-Order': 'nosuchfield^' } }), 400, 'malformed_order',
        'Malformed result ordering value: nosuchfield^');
      expectError(await api.get('/3.0/assets', { headers: { 'X-API-Result-Order': 'asset_no,files.id' } }), 400, 'malformed_order',
        'Malformed result ordering value: asset_no,files.id');
      const [id] = await put('assets', { asset_no: 'MO-1' });
      expectOk(await api.post(`/3.0/assets/id=${id}`, { status: 'x' }, { headers: { 'X-API-Result-Order': 'nosuchfield' } }));
    });

    it('no_access: 401 with the signature', async () => {
      expectError(await svc.client(null).get('/3.0/assets'), 401, 'no_access', 'You do not have access to the API. Your signature: none');
    });

    it('bad_session, no_session and forbidden are reachable from a basic-mode certificate', async () => {
      for (const authorization of ['Bearer abc', 'Basic !!!', `Basic ${Buffer.from(`user:${'a'.repeat(64)}`).toString('base64')}`,
        `Basic ${Buffer.from(`session:${'a'.repeat(64)}`).toString('base64')}`]) {
        expectError(await api.get('/3.0/assets', { headers: { Authorization: authorization } }), 401, 'bad_session', 'Bad session token.');
      }
      expectError(await api.get('/3.0/logout'), 400, 'no_session', 'No session to log out');
      expectError(await api.post('/3.0/login', { username: 'nobody', password: 'whatever-it-is' }), 403, 'forbidden',
        'Impersonation is not enabled for this certificate');
    });

    it('no_endpoint and no_version: 404; endpoint names are case-sensitive', async () => {
      expectError(await api.get('/3.0/XXXX'), 404, 'no_endpoint', 'Endpoint XXXX does not exist');
      expectError(await api.get('/3.0/Assets'), 404, 'no_endpoint', 'Endpoint Assets does not exist');
      expectError(await api.put('/3.0/nothing/id=1', {}), 404, 'no_endpoint', 'Endpoint nothing does not exist');
      expectError(await api.get('/2.0/assets'), 404, 'no_version', 'API version 2.0 is not supported');
      expectError(await api.get('/v3/assets'), 404, 'no_version', 'API version v3 is not supported');
      // 404 comes before 405.
      expectError(await api.request('OPTIONS', '/3.0/XXXX'), 404, 'no_endpoint', 'Endpoint XXXX does not exist');
    });

    it('method_not_allowed: 405 with an Allow header; OPTIONS and PATCH → 405', async () => {
      const post = await api.post('/3.0/endpoints', {});
      expectError(post, 405, 'method_not_allowed', 'Method POST not supported on endpoint endpoints');
      assert.deepEqual(allowOf(post), new Set(['GET', 'HEAD']));
      const del = await api.delete('/3.0/auditlog/id=1');
      expectError(del, 405, 'method_not_allowed', 'Method DELETE not supported on endpoint auditlog');
      assert.deepEqual(allowOf(del), new Set(['GET', 'HEAD', 'PUT']));
      const options = await api.request('OPTIONS', '/3.0/assets');
      expectError(options, 405, 'method_not_allowed', 'Method OPTIONS not supported on endpoint assets');
      assert.deepEqual(allowOf(options), new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE']));
      assert.equal(options.envelope.request.request_method, 'Options');
      const patch = await api.request('PATCH', '/3.0/assets/id=1', { body: '{}' });
      expectError(patch, 405, 'method_not_allowed', 'Method PATCH not supported on endpoint assets');
      assert.deepEqual(allowOf(patch), new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE']));
      // 405 comes before the filters (400).
      expectError(await api.delete('/3.0/endpoints/idd=1'), 405, 'method_not_allowed', 'Method DELETE not supported on endpoint endpoints');
    });

    it('a verb in lower or mixed case (one the API serves too) or one Node does not know → 405 with the envelope, after the 401 and 404 checks', async () => {
      const send = (client: TestClient, line: string) => client.raw(`${line}\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      const lower = await send(api, 'patch /3.0/assets/id=1 HTTP/1.1');
      expectError(lower, 405, 'method_not_allowed', 'Method PATCH not supported on endpoint assets');
      assert.deepEqual(allowOf(lower), new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE']));
      assert.deepEqual([lower.envelope.request.url, lower.envelope.request.request_method], ['/3.0/assets/id=1', 'Patch']);
      const unknown = await send(api, 'FOO /3.0/auditlog HTTP/1.1');
      expectError(unknown, 405, 'method_not_allowed', 'Method FOO not supported on endpoint auditlog');
      assert.deepEqual(allowOf(unknown), new Set(['GET', 'HEAD', 'PUT']));
      // A verb the API serves, in another case: methods are case-sensitive, so it is a verb the endpoint does not serve.
      for (const verb of ['get', 'Put', 'dElEtE', 'head', 'post']) {
        const res = await send(api, `${verb} /3.0/assets HTTP/1.1`);
        expectError(res, 405, 'method_not_allowed', `Method ${verb.toUpperCase()} not supported on endpoint assets`);
        assert.deepEqual(allowOf(res), new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE']));
      }
      expectError(await send(api, 'FOO /3.0/XXXX HTTP/1.1'), 404, 'no_endpoint', 'Endpoint XXXX does not exist');
      const refused = await send(svc.client(null), 'FOO /3.0/assets HTTP/1.1');
      expectError(refused, 401, 'no_access', 'You do not have access to the API. Your signature: none');
      // Not a request line at all: the parser's 400 too.
      const garbage = await api.raw('\x01\x02 nonsense\r\n\r\n');
      assert.deepEqual([garbage.status, garbage.body], [400, { response: { error: 'Malformed HTTP request', code: 'malformed_request' } }]);
    });

    it('data_error: deleting a referenced location → 409, nothing deleted, no audit entry', async () => {
      const [loc] = await put('locations', { description: 'Referenced' });
      const [other] = await put('locations', { description: 'Free' });
      await put('assets', { asset_no: 'DE-1', location_id: loc });
      await writesNothing(async () => {
        expectError(await api.delete(`/3.0/locations/id=${loc}`), 409, 'data_error', `Data Error: locations record ${loc} is still referenced by assets`);
        // One transaction: the free location matched by the same request stays too.
        expectError(await api.delete(`/3.0/locations/description~e/id+${Math.min(loc!, other!)}`), 409, 'data_error',
          `Data Error: locations record ${loc} is still referenced by assets`);
      });
      assert.equal((await list(`locations/id=${other}`)).length, 1);
    });

    it('data_error: a duplicate asset_no → 409, nothing written', async () => {
      await put('assets', { asset_no: 'DUP-1' });
      const [second] = await put('assets', { asset_no: 'DUP-2' });
      await writesNothing(async () => {
        expectErrorPrefix(await api.put('/3.0/assets', { asset_no: 'DUP-1' }), 409, 'data_error', 'Data Error: ');
        expectErrorPrefix(await api.post(`/3.0/assets/id=${second}`, { asset_no: 'DUP-1' }), 409, 'data_error', 'Data Error: ');
        // The second object of one PUT clashes with the first: the first is not kept either.
        expectErrorPrefix(await api.put('/3.0/assets', [{ asset_no: 'DUP-3' }, { asset_no: 'DUP-3' }]), 409, 'data_error', 'Data Error: ');
      });
      assert.equal((await list('assets/asset_no=DUP-3')).length, 0);
    });

    it('too_many: 1001 records in one PUT → 400, nothing written; 1000 are accepted', async () => {
      const batch = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ description: `${tag}-${i}` }));
      await writesNothing(async () => {
        expectError(await api.put('/3.0/locations', batch(1001, 'TM')), 400, 'too_many', 'Too many records in one request: 1001 (at most 1000)');
      });
      const before = await count(svc, 'auditlog');
      const ids = await put('locations', batch(1000, 'OK'));
      assert.equal(ids.length, 1000);
      assert.equal(await count(svc, 'auditlog'), before + 1000);
      expectOk(await api.delete('/3.0/locations/description~OK-'));
    });

    it('too_long: a path over 8192 characters → 414; 8192 is accepted', async () => {
      const prefix = '/3.0/assets/description=';
      expectError(await api.get(prefix + 'a'.repeat(8193 - prefix.length)), 414, 'too_long', 'Request line too long');
      expectOk(await api.get(prefix + 'a'.repeat(8192 - prefix.length)));
    });

    it('too_long: beyond what the HTTP parser accepts, a request line → 414 and headers → 431, as JSON', async () => {
      const line = await api.get(`/3.0/assets/description=${'a'.repeat(20_000)}`);
      assert.equal(line.status, 414);
      assert.deepEqual(line.body, { response: { error: 'Request line too long', code: 'too_long' } });
      const headers = await api.get('/3.0/assets', { headers: { 'x-padding': 'b'.repeat(20_000) } });
      assert.equal(headers.status, 431);
      assert.deepEqual(headers.body, { response: { error: 'Request headers too large', code: 'too_long' } });
    });

    it('internal: a failure that is not an API error → 500 with a reference that is in the log, never SQL or a stack', async () => {
      const lines: string[] = [];
      const explode: Endpoint = {
        name: 'explode', access: { GET: 'readonly' },
        handlers: { async GET(c) {
          await sql`SELECT no_such_column FROM assets WHERE secret_marker = 1`.execute(c.ctx.database.db);
          return { response: '[]' };
        } },
      };
      const broken = await startService(kind, { extraEndpoints: [explode], logLevel: 'error', logStream: { write: (l: string) => void lines.push(l) } });
      try {
        const { client } = await broken.certificate(await broken.company('Broken'));
        const r = await client.get('/3.0/explode');
        assert.equal(r.status, 500, r.text);
        assert.equal(r.headers['content-type'], JSON_TYPE);
        assert.equal(r.errorReply.code, 'internal');
        const m = /^Internal error, reference (\S+)$/.exec(r.errorReply.error);
        assert.ok(m, r.text);
        for (const leak of ['no_such_column', 'secret_marker', 'SELECT', 'column', '.ts:', 'at ']) assert.ok(!r.text.includes(leak), `leaks ${leak}: ${r.text}`);
        assert.ok(lines.some((l) => l.includes(m[1]!)), 'the reference is in the log');
      } finally {
        await broken.close();
      }
    });

    // PostgreSQL only: SQLite has no server to drop a connection.
    if (kind === 'postgres') it('an idle database connection dropped by the server neither crashes the service nor fails later requests', async () => {
      const { db } = svc.database;
      // Open several pooled connections, then have the server end all but one of them.
      await Promise.all([1, 2, 3].map(() => sql`SELECT pg_sleep(0.05)`.execute(db)));
      const { rows } = await sql<{ n: number | string }>`SELECT COUNT(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`.execute(db);
      assert.ok(Number(rows[0]!.n) >= 1, 'some pooled connection was terminated');
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 0; i < 4; i++) expectOk(await api.get('/3.0/assets'));
    });

    // ---- transport ---------------------------------------------------------------

    it('HEAD behaves as GET without a body', async () => {
      await put('assets', { asset_no: 'HEAD-1' });
      const get = await api.get('/3.0/assets');
      const head = await api.request('HEAD', '/3.0/assets');
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-type'], JSON_TYPE);
      assert.equal(head.text, '');
      if (head.headers['content-length'] !== undefined) assert.equal(Number(head.headers['content-length']), Buffer.byteLength(get.text));
      const missing = await api.request('HEAD', '/3.0/XXXX');
      assert.equal(missing.status, 404);
      assert.equal(missing.text, '');
      const badFilter = await api.request('HEAD', '/3.0/assets/idd=1');
      assert.equal(badFilter.status, 400);
      assert.equal(badFilter.text, '');
      const noGet = await api.request('HEAD', '/3.0/login');
      assert.equal(noGet.status, 405);
      assert.equal(noGet.text, '');
    });

    it('a trailing / and empty segments are ignored; url stays raw', async () => {
      const [id] = await put('assets', { asset_no: 'SLASH-1' });
      const canonical = await list('assets/asset_no=SLASH-1');
      assert.equal(canonical.length, 1);
      assert.equal(canonical[0]!.id, id);
      for (const path of ['/3.0/assets/asset_no=SLASH-1/', '/3.0//assets//asset_no=SLASH-1//', '//3.0/assets/asset_no=SLASH-1']) {
        const r = await api.get(path);
        assert.deepEqual(expectOk(r), canonical, path);
        assert.equal(r.envelope.request.url, path);
        assert.equal(r.envelope.request.endpoint, 'assets');
      }
      expectOk(await api.get('/3.0/endpoints/'));
      expectError(await api.post('/3.0/assets//', { status: 'x' }), 400, 'filter_required',
        'No fields specified for record updating. This would update ALL assets records for your company. Request aborted.');
    });

    it('query parameters other than filter and page are ignored', async () => {
      const [id] = await put('assets', { asset_no: 'QS-1' });
      const r = await api.get(`/3.0/assets/id=${id}?id=0&pages=9&Filter=id=0`);
      assert.equal(expectOk<Asset[]>(r).length, 1);
      assert.equal(r.envelope.request.url, `/3.0/assets/id=${id}`);
      assert.equal(expectOk<unknown[]>(await api.get('/3.0/endpoints?x=1')).length, 16);
      // Such a parameter is not a filter: POST and DELETE still need one.
      expectError(await api.delete(`/3.0/assets?id=${id}`), 400, 'filter_required',
        'No fields specified for record deletion. This would delete ALL assets records for your company. Request aborted.');
    });

    // ---- bodies ----------------------------------------------------------------

    it('JSON bodies are read whatever the Content-Type says, or without one', async () => {
      const types = ['application/x-www-form-urlencoded', 'text/plain', 'application/json', 'multipart/form-data; boundary=x', undefined,
        // Not even a media type: still JSON.
        'foo', 'json', 'application/json, text/plain', ''];
      for (const [i, type] of types.entries()) {
        const headers: Record<string, string> = type === undefined ? {} : { 'Content-Type': type };
        const r = await api.put('/3.0/assets', JSON.stringify({ asset_no: `CT-${i}` }), { headers });
        const [id] = expectOk<Inserted>(r, 201).ids;
        const u = await api.post(`/3.0/assets/id=${id}`, JSON.stringify({ description: `via ${type}` }), { headers });
        assert.deepEqual(expectOk(u), { records_updated: 1, records_found: 1 });
        assert.equal((await list(`assets/id=${id}`))[0]!.description, `via ${type}`);
      }
    });

    it('an unparsable Content-Type changes nothing in the order of checks: 401, then 404', async () => {
      const headers = { 'Content-Type': 'foo' };
      expectError(await svc.client(null).put('/9.9/nope', '{}', { headers }), 401, 'no_access', 'You do not have access to the API. Your signature: none');
      expectError(await api.put('/9.9/nope', '{}', { headers }), 404, 'no_version', 'API version 9.9 is not supported');
      // (Node's client sends a DELETE body without a length unless told.)
      expectError(await api.request('DELETE', '/3.0/assets', { headers: { ...headers, 'Content-Length': '2' }, body: '{}' }), 400, 'filter_required',
        'No fields specified for record deletion. This would delete ALL assets records for your company. Request aborted.');
    });

    it('integer fields accept "12"; other strings and non-integers are invalid values', async () => {
      const [id] = await put('assets', { asset_no: 'INT-1', period: '12' });
      assert.equal((await list(`assets/id=${id}`))[0]!.period, 12);
      assert.deepEqual(expectOk(await api.post(`/3.0/assets/id=${id}`, { period: '24' })), { records_updated: 1, records_found: 1 });
      assert.equal((await list(`assets/id=${id}`))[0]!.period, 24);
      await writesNothing(async () => {
        for (const bad of ['012', '1.5', '12a', ' 12', '', 12.5, '9007199254740993', true, [12]]) {
          expectError(await api.put('/3.0/assets', { asset_no: 'INT-X', period: bad }), 400, 'invalid_value',
            'Field verification failed, invalid value for period');
        }
      });
    });

    it('0/1 fields accept 0, 1, "0", "1", true and false; nothing else', async () => {
      const accepted: [unknown, number][] = [[0, 0], [1, 1], ['0', 0], ['1', 1], [true, 1], [false, 0]];
      for (const [i, [value, stored]] of accepted.entries()) {
        const [id] = await put('users', { username: `flag-${kind}-${i}`, email: `f${i}@example.com`, email_confirmed: value, reminders: value });
        const [u] = await list(`users/id=${id}`);
        assert.equal(u!.email_confirmed, stored, `email_confirmed ${JSON.stringify(value)}`);
        assert.equal(u!.reminders, stored, `reminders ${JSON.stringify(value)}`);
      }
      await writesNothing(async () => {
        for (const bad of [2, -1, '2', 'true', 'yes', '', 0.5]) {
          expectError(await api.put('/3.0/users', { username: 'flag-bad', email: 'b@example.com', email_confirmed: bad }), 400, 'invalid_value',
            'Field verification failed, invalid value for email_confirmed');
        }
      });
    });

    // ---- verbs ---------------------------------------------------------------------

    it('POST: records_found counts matches, records_updated real changes; equal values update nothing', async () => {
      await put('assets', [{ asset_no: 'V-1' }, { asset_no: 'V-2' }, { asset_no: 'V-3', status: 'Retired' }]);
      let before = await count(svc, 'auditlog');
      const first = await api.post('/3.0/assets/asset_no~V-', { status: 'Retired' });
      assert.equal(first.status, 200);
      assert.ok(first.text.endsWith(',"response":{"records_updated":2,"records_found":3}}'), first.text);
      assert.equal(await count(svc, 'auditlog'), before + 2);
      before = await count(svc, 'auditlog');
      assert.deepEqual(expectOk(await api.post('/3.0/assets/asset_no~V-', { status: 'Retired' })), { records_updated: 0, records_found: 3 });
      assert.deepEqual(expectOk(await api.post('/3.0/assets/asset_no~V-', { period: '3', status: 'Retired' })), { records_updated: 3, records_found: 3 });
      assert.deepEqual(expectOk(await api.post('/3.0/assets/asset_no~V-', { period: 3 })), { records_updated: 0, records_found: 3 });
      assert.equal(await count(svc, 'auditlog'), before + 3);
      assert.deepEqual(expectOk(await api.post('/3.0/assets/asset_no=nothing-matches', { status: 'x' })), { records_updated: 0, records_found: 0 });
    });

    it('POST {} → 200 with records_updated 0', async () => {
      await put('assets', [{ asset_no: 'EMPTY-1' }, { asset_no: 'EMPTY-2' }]);
      await writesNothing(async () => {
        assert.deepEqual(expectOk(await api.post('/3.0/assets/asset_no~EMPTY-', {})), { records_updated: 0, records_found: 2 });
      });
    });

    it('PUT an object or an array → 201 {records_inserted, ids}; the records exist', async () => {
      const one = await api.put('/3.0/locations', { description: 'P-1' });
      const r1 = expectOk<Inserted>(one, 201);
      assert.deepEqual(Object.keys(r1), ['records_inserted', 'ids']);
      assert.equal(r1.records_inserted, 1);
      assert.equal(r1.ids.length, 1);
      const many = expectOk<Inserted>(await api.put('/3.0/locations', [{ description: 'P-2' }, { description: 'P-3' }, { description: 'P-4' }]), 201);
      assert.equal(many.records_inserted, 3);
      assert.equal(many.ids.length, 3);
      const stored = await list(`locations/description~P-/id+${r1.ids[0]}`);
      assert.deepEqual(stored.map((l) => [l.id, l.description]), [[r1.ids[0], 'P-1'], ...many.ids.map((id: number, i: number) => [id, `P-${i + 2}`])]);
    });

    it('PUT an array with one invalid object inserts nothing and writes no audit entry', async () => {
      await writesNothing(async () => {
        expectError(await api.put('/3.0/assets', [{ asset_no: 'ARR-1' }, { asset_no: 'ARR-2', period: 'x' }, { asset_no: 'ARR-3' }]), 400,
          'invalid_value', 'Field verification failed, invalid value for period');
        expectError(await api.put('/3.0/assets', [{ asset_no: 'ARR-1' }, { asset_no: 'ARR-2', location_id: 987654 }]), 400,
          'invalid_value', 'Field verification failed, invalid value for location_id');
        expectErrorPrefix(await api.put('/3.0/assets', [{ asset_no: 'ARR-1' }, 'not an object']), 400, 'malformed_json', 'Malformed JSON body: ');
      });
      assert.equal((await list('assets/asset_no~ARR-')).length, 0);
    });

    it('DELETE → {records_deleted, records_found}; one audit entry per record', async () => {
      await put('locations', [{ description: 'DEL-1' }, { description: 'DEL-2' }]);
      const before = await count(svc, 'auditlog');
      const r = await api.delete('/3.0/locations/description~DEL-');
      assert.ok(r.text.endsWith(',"response":{"records_deleted":2,"records_found":2}}'), r.text);
      assert.equal(await count(svc, 'auditlog'), before + 2);
      assert.equal((await list('locations/description~DEL-')).length, 0);
      assert.deepEqual(expectOk(await api.delete('/3.0/locations/description~DEL-')), { records_deleted: 0, records_found: 0 });
    });

    it('every write creates its audit entries with the change', async () => {
      const before = await count(svc, 'auditlog');
      const [a, b] = await put('assets', [{ asset_no: 'AU-1' }, { asset_no: 'AU-2' }]);
      assert.equal(await count(svc, 'auditlog'), before + 2);
      const entries = await list(`auditlog/endpoint=assets/action=create/record_id+${a}`);
      assert.deepEqual(entries.map((e) => e.record_id), [a, b]);
      assert.deepEqual(entries.map((e) => e.asset_id), [a, b]);
    });

    // ---- limits -------------------------------------------------------------------

    it('string fields: 1000 characters accepted (counted as characters), 1001 refused; nothing written', async () => {
      const [id] = await put('assets', { asset_no: 'x'.repeat(1000) });
      await put('assets', { asset_no: '€'.repeat(1000) });
      await put('assets', { asset_no: '😀'.repeat(1000) });
      await writesNothing(async () => {
        expectError(await api.put('/3.0/assets', { asset_no: 'y'.repeat(1001) }), 400, 'invalid_value', 'Field verification failed, invalid value for asset_no');
        expectError(await api.put('/3.0/assets', { asset_no: 'S', description: 'd'.repeat(1001) }), 400, 'invalid_value',
          'Field verification failed, invalid value for description');
        expectError(await api.post(`/3.0/assets/id=${id}`, { serial_no: 's'.repeat(1001) }), 400, 'invalid_value',
          'Field verification failed, invalid value for serial_no');
      });
    });

    it('messagetext: 10000 characters accepted, 10001 refused; nothing written', async () => {
      const [id] = await put('messages', { messagetext: 'm'.repeat(10000) });
      assert.equal((await list(`messages/id=${id}`))[0]!.messagetext.length, 10000);
      await writesNothing(async () => {
        expectError(await api.put('/3.0/messages', { messagetext: 'm'.repeat(10001) }), 400, 'invalid_value',
          'Field verification failed, invalid value for messagetext');
      });
    });

    it('data nested 32 deep is accepted, 33 deep refused; nothing written', async () => {
      const [id] = await put('assets', { asset_no: 'DEEP-32', data: nested(32) });
      assert.deepEqual((await list(`assets/id=${id}`))[0]!.data, nested(32));
      await writesNothing(async () => {
        expectError(await api.put('/3.0/assets', { asset_no: 'DEEP-33', data: nested(33) }), 400, 'invalid_value',
          'Field verification failed, invalid value for data');
        expectError(await api.post(`/3.0/assets/id=${id}`, { data: nested(33) }), 400, 'invalid_value',
          'Field verification failed, invalid value for data');
        const r = await api.put('/3.0/assets', `{"asset_no":"DEEP-X","data":${'['.repeat(5000)}${']'.repeat(5000)}}`);
        assert.equal(r.status, 400, r.text);
        assert.ok(['invalid_value', 'malformed_json'].includes(r.errorReply.code), r.text);
      });
    });

    it('data up to 64 KiB is accepted, over it refused; nothing written', async () => {
      const fill = (bytes: number) => ({ s: 'x'.repeat(bytes - '{"s":""}'.length) });
      assert.equal(JSON.stringify(fill(65536)).length, 65536);
      const [id] = await put('assets', { asset_no: 'BIG-64K', data: fill(65536) });
      assert.equal(((await list(`assets/id=${id}`))[0]!.data!.s as string).length, 65536 - 8);
      await writesNothing(async () => {
        expectError(await api.put('/3.0/assets', { asset_no: 'BIG-X', data: fill(65537) }), 400, 'invalid_value',
          'Field verification failed, invalid value for data');
        expectError(await api.post(`/3.0/assets/id=${id}`, { data: fill(100_000) }), 400, 'invalid_value',
          'Field verification failed, invalid value for data');
      });
    });

    it('32 filter segments are accepted, 33 refused with invalid_filter; nothing changes', async () => {
      const segments = (n: number) => Array.from({ length: n }, (_, i) => `id!${-1 - i}`);
      expectOk(await api.get(`/3.0/assets/${segments(32).join('/')}`));
      expectOk(await api.get(`/3.0/assets/${segments(32).join('/')}/page=1`));
      const many = segments(33);
      const r = await api.get(`/3.0/assets/${many.join('/')}`);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.errorReply.code, 'invalid_filter');
      assert.ok(many.map((s) => `Invalid filter definition: ${s}`).includes(r.errorReply.error), r.text);
      await writesNothing(async () => {
        const d = await api.delete(`/3.0/assets/${many.join('/')}`);
        assert.equal(d.status, 400, d.text);
        assert.equal(d.errorReply.code, 'invalid_filter');
      });
    });

    // ---- dynamic JSON ----------------------------------------------------------------------

    it('dynamic JSON comes back with its keys in the written order and its numbers as written', async () => {
      const data = '{"b":1,"a":2,"10":3,"2":4,"n":{"z":1.50,"y":1e3,"x":-0.0,"w":12345678901234567890,"v":1E-7},"l":[3,1,{"b":0,"a":0}],"u":"ü"}';
      const r = await api.put('/3.0/assets', `{"asset_no":"ORDER-1","data":${data}}`);
      const [id] = expectOk<Inserted>(r, 201).ids;
      const got = await api.get(`/3.0/assets/id=${id}`);
      assert.ok(got.text.includes(`,"data":${data},"modified":`), got.text);
      // Escapes may be written differently, but the string is the same.
      expectOk(await api.post(`/3.0/assets/id=${id}`, '{"data":{"s":"\\u00fc\\"q\\/\\n"}}'));
      assert.deepEqual((await list(`assets/id=${id}`))[0]!.data, { s: 'ü"q/\n' });
      // POST replaces the value whole, in its own order.
      expectOk(await api.post(`/3.0/assets/id=${id}`, '{"data":{"2":"two","b":"bee"}}'));
      assert.ok((await api.get(`/3.0/assets/id=${id}`)).text.includes('"data":{"2":"two","b":"bee"}'));
      // Duplicate keys: the last one wins.
      expectOk(await api.post(`/3.0/assets/id=${id}`, '{"data":{"k":1,"m":2,"k":3}}'));
      assert.deepEqual((await list(`assets/id=${id}`))[0]!.data, { m: 2, k: 3 });
    });
  });

  describe(`body size limit (${kind})`, () => {
    let svc: Service;
    let api: TestClient;
    let cert: TestCert;

    before(async () => {
      svc = await startService(kind, { bodyMaxBytes: 1000 });
      ({ client: api, cert } = await svc.certificate(await svc.company('Small')));
    });
    after(() => svc.close());

    const bodyOf = (bytes: number) => {
      const text = JSON.stringify({ description: 'x'.repeat(bytes - '{"description":""}'.length) });
      assert.equal(Buffer.byteLength(text), bytes);
      return text;
    };

    it('a body over BODY_MAX_BYTES → 413, nothing written; exactly the limit is accepted', async () => {
      const before = await count(svc, 'auditlog');
      const big = await api.put('/3.0/locations', bodyOf(1001));
      expectError(big, 413, 'too_large', 'Request body exceeds 1000 bytes');
      assert.equal(big.envelope.request.request_method, 'Put');
      expectError(await api.put('/3.0/locations', { description: 'x'.repeat(5000) }), 413, 'too_large', 'Request body exceeds 1000 bytes');
      assert.equal(await count(svc, 'locations'), 0);
      assert.equal(await count(svc, 'auditlog'), before);
      expectOk(await svc.client(cert).put('/3.0/locations', bodyOf(1000)), 201);
    });

    it('a chunked body (no Content-Length) over the limit → 413', async () => {
      const before = await count(svc, 'locations');
      const text = bodyOf(1500);
      expectError(await chunkedPut(svc.port, cert, '/3.0/locations', [text.slice(0, 700), text.slice(700)]), 413, 'too_large',
        'Request body exceeds 1000 bytes');
      assert.equal(await count(svc, 'locations'), before);
      expectOk(await chunkedPut(svc.port, cert, '/3.0/locations', [bodyOf(900).slice(0, 400), bodyOf(900).slice(400)]), 201);
    });

    it('413 comes after 404/405 and before the filters (400)', async () => {
      const client = svc.client(cert);
      expectError(await client.put('/3.0/locations/idd=1', bodyOf(2000)), 413, 'too_large', 'Request body exceeds 1000 bytes');
      expectError(await svc.client(cert).post('/3.0/endpoints', bodyOf(2000)), 405, 'method_not_allowed', 'Method POST not supported on endpoint endpoints');
      expectError(await svc.client(cert).put('/3.0/XXXX', bodyOf(2000)), 404, 'no_endpoint', 'Endpoint XXXX does not exist');
    });
  });
}
