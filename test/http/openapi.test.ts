// The OpenAPI document served at /openapi.json: it lints clean under Redocly's
// recommended rules, and it is true — every answer of a broad tour of the API
// validates against the schema the document gives for its operation and status,
// on both engines.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildApp } from '../../src/app.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { RateLimiter } from '../../src/ratelimit/limiter.ts';
import { createSelfSigned } from '../../src/tls/x509.ts';
import { DB_KINDS, type Service, startService, TestClock } from '../support/harness.ts';
import { type Exchange, ResponseChecker } from '../support/openapi-check.ts';
import { asDocument, type OpenApiDocument, type Operation } from '../support/openapi-doc.ts';
import { run } from '../support/openapi-run.ts';
import { FlakyBlobs, sweep, Tour, type World } from '../support/openapi-tour.ts';
import { user } from '../support/workflows.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BODY_MAX = 16 * 1024;
const UPLOAD_MAX = 32 * 1024;

async function servedDocument(svc: Service): Promise<OpenApiDocument> {
  const res = await svc.client(null).get('/openapi.json');
  assert.equal(res.status, 200);
  return asDocument(res.body);
}

/** What `redocly lint --format=json` prints. */
interface LintReport {
  readonly totals: { readonly errors: number; readonly warnings: number };
  readonly problems: readonly {
    readonly severity: string; readonly ruleId: string; readonly message: string; readonly location?: readonly { readonly pointer?: string }[];
  }[];
}

describe('OpenAPI document', () => {
  let svc: Service;
  let doc: OpenApiDocument;
  before(async () => {
    svc = await startService('sqlite');
    doc = await servedDocument(svc);
  });
  after(() => svc.close());

  it('docs/openapi.json is the document served (npm run docs writes it)', () => {
    assert.deepEqual(JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8')), doc);
  });

  it('lints with 0 errors and 0 warnings under the recommended rules (Redocly, offline)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      // No telemetry and no update check: the lint runs without a network.
      const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' };
      const { stdout } = await promisify(execFile)(join(ROOT, 'node_modules/.bin/redocly'),
        ['lint', '--format=json', '--config', join(ROOT, 'redocly.yaml'), file], { env, maxBuffer: 64 * 1024 * 1024 })
        .catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
      const report = JSON.parse(stdout) as LintReport;
      const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
      assert.deepEqual({ errors: report.totals.errors, warnings: report.totals.warnings, problems }, { errors: 0, warnings: 0, problems: [] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names every operation uniquely, by verb and endpoint', () => {
    const ids = [...new ResponseChecker(doc).operations()].map((o) => o.op.operationId);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ['listAssets', 'listAssetsFiltered', 'createAssets', 'updateAssets', 'deleteAssets', 'listEndpoints', 'getMetadata',
      'updateAssetsByQuery', 'deleteAssetsByQuery', 'login', 'logout', 'setPassword', 'setPasswordByQuery', 'getRandomPassword', 'moveAsset', 'uploadFile', 'downloadFile', 'listAuditlog', 'addAuditNote']) {
      assert.ok(ids.includes(id), id);
    }
  });

  it('describes filters, bodies, the envelope, errors, headers and both security schemes', () => {
    const filters = doc.paths['/3.0/assets/{filters}']?.parameters?.[0];
    assert.match(filters?.description ?? '', /<field><operator><value>/);
    assert.equal(filters?.['x-filterable-fields']?.next_check, 'date or null');
    assert.equal(filters?.['x-filterable-fields']?.['location.description'], 'string');
    const { schemas, responses, headers, securitySchemes } = doc.components;
    assert.deepEqual(schemas.AssetsCreate?.required, ['asset_no']);
    assert.ok(schemas.AssetsUpdate?.properties);
    assert.equal(schemas.AssetsUpdate.properties.id, undefined);
    const put = doc.paths['/3.0/assets']?.put;
    assert.equal(put?.requestBody?.content['application/json']?.schema.oneOf?.[1]?.type, 'array');
    assert.deepEqual(put?.responses['201']?.content?.['application/json']?.schema.required, ['request', 'response']);
    const list = doc.paths['/3.0/assets']?.get;
    assert.deepEqual(list?.responses['200']?.content?.['application/json']?.schema.required, ['request', 'pagination', 'response']);
    assert.equal(list?.parameters?.[0]?.$ref, '#/components/parameters/ResultOrder');
    assert.equal(responses.RateLimited?.headers?.['Retry-After']?.$ref, '#/components/headers/Retry-After');
    assert.ok(headers['X-RateLimit-Remaining'] && headers.RateLimit);
    assert.deepEqual(securitySchemes.mutualTLS?.type, 'mutualTLS');
    assert.deepEqual([securitySchemes.session?.type, securitySchemes.session?.scheme], ['http', 'basic']);
    assert.deepEqual(doc.paths['/3.0/login']?.post?.security, [{ mutualTLS: [] }]);
  });

  it('describes the query form of filters on every GET, POST and DELETE that takes filters, and page on lists', () => {
    const { Filter: filter, Page: page } = doc.components.parameters;
    assert.deepEqual({ name: filter?.name, in: filter?.in, required: filter?.required, style: filter?.style, explode: filter?.explode, type: filter?.schema?.type },
      { name: 'filter', in: 'query', required: false, style: 'form', explode: true, type: 'array' });
    assert.deepEqual({ name: page?.name, in: page?.in, schema: page?.schema },
      { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1 } });
    const refs = (op: Operation | undefined) => (op?.parameters ?? []).map((p) => p.$ref).filter((r) => typeof r === 'string');
    const takingFilters: string[] = [];
    for (const { template, method, op } of new ResponseChecker(doc).operations()) {
      const filtered = template.includes('{filters}') || (op.responses['400'] && refs(op).includes('#/components/parameters/Filter'));
      if (!filtered || method === 'put') continue;
      takingFilters.push(`${method} ${template}`);
      assert.ok(refs(op).includes('#/components/parameters/Filter'), `${method} ${template} takes ?filter=`);
      assert.equal(refs(op).includes('#/components/parameters/Page'), method === 'get', `${method} ${template}: ?page= on lists only`);
    }
    for (const op of ['get /3.0/assets', 'get /3.0/assets/{filters}', 'post /3.0/assets', 'post /3.0/assets/{filters}', 'delete /3.0/assets',
      'delete /3.0/assets/{filters}', 'post /3.0/password', 'get /3.0/changes']) assert.ok(takingFilters.includes(op), op);
    const assets = doc.paths['/3.0/assets'];
    assert.equal(assets?.post?.operationId, 'updateAssetsByQuery');
    // Types a generated client can use: JSON objects as maps, a webhook's events as a list of names.
    const open = { type: 'object', additionalProperties: true };
    const { schemas } = doc.components;
    assert.deepEqual(schemas.Assets?.properties?.data?.anyOf?.[0], open);
    assert.deepEqual(schemas.Companies?.properties?.styles, { type: ['object', 'null'], additionalProperties: true });
    assert.deepEqual(schemas.Webhooks?.properties?.events?.items, { type: 'string', minLength: 1 });
    assert.equal(schemas.WebhooksCreate?.properties?.events?.type, 'array');
    assert.equal(assets?.delete?.operationId, 'deleteAssetsByQuery');
    assert.equal(refs(doc.paths['/3.0/endpoints']?.get).includes('#/components/parameters/Filter'), false);
    assert.ok(assets?.put?.parameters);
    assert.equal(assets.put.parameters.some((p) => p.$ref === '#/components/parameters/Filter'), false);
  });

  it('the check notices answers that differ from the document', () => {
    const checker = new ResponseChecker(doc);
    const request = { url: '/3.0/assets', endpoint: 'assets', requested_version: '3.0', api_version: 3, request_method: 'Get', timestamp: 1, session: null };
    const json = { 'content-type': 'application/json; charset=utf-8', etag: 'W/"x"' };
    const answer = (status: number, body: unknown, headers: Record<string, string> = json, method = 'GET', path = '/3.0/assets', requestBody?: string) =>
      checker.check({ method, path, status, headers, text: JSON.stringify(body), requestBody }).problems;
    const wrong = (problems: readonly string[]) => assert.ok(problems.length > 0, 'the check should have found a problem');
    assert.deepEqual(answer(200, { request, pagination: { total_pages: 0, total_records: 0 }, response: [] }), []);
    // A record without its fields, a missing pagination, an undocumented status, a code the operation never gives.
    wrong(answer(200, { request, pagination: { total_pages: 1, total_records: 1 }, response: [{ id: 1 }] }));
    wrong(answer(200, { request, response: [] }));
    wrong(answer(418, { request, response: { error: 'teapot', code: 'teapot' } }));
    wrong(answer(400, { request, response: { error: 'x', code: 'too_many' } }));
    // 429 without Retry-After; rate-limit headers on a response that does not declare them.
    wrong(answer(429, { request, response: { error: 'wait', code: 'rate_limited' } }));
    wrong(answer(200, { status: 'ok' }, { ...json, 'x-ratelimit-limit': '5' }, 'GET', '/healthz'));
    // A success where the document has no operation.
    wrong(answer(200, { request, response: [] }, json, 'PATCH'));
    // A request body taken that the request schema refuses, and one refused for a field the schema lists as its own.
    const created = { request: { ...request, request_method: 'Put' }, response: { records_inserted: 1, ids: [1] } };
    wrong(answer(201, created, json, 'PUT', '/3.0/assets', '{"asset_no":"A","no_such_field":1}'));
    const refused = { request: { ...request, request_method: 'Put' }, response: { error: 'Field verification failed, invalid field nope', code: 'invalid_field' } };
    wrong(answer(400, refused, json, 'PUT', '/3.0/assets', '{"asset_no":"A"}'));
  });

  it('the readiness failure matches the document', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-ready-'));
    const database = openDatabase({ dataDir: dir });
    // A store that no longer answers: every statement fails.
    const down: Database = { ...database, db: { getExecutor() { throw new Error('the database is down'); } } as unknown as Database['db'] };
    const cert = createSelfSigned({ cn: 'localhost' });
    const app = await buildApp({ database: down, clock: new TestClock(), tls: { key: cert.keyPem, cert: cert.certPem },
      baseUrl: 'https://localhost:8443', logLevel: 'silent' });
    try {
      const res = await app.fastify.inject({ method: 'GET', url: '/readyz' });
      const verdict = new ResponseChecker(doc).check({ method: 'GET', path: '/readyz', status: res.statusCode, headers: res.headers, text: res.body });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(verdict.problems, []);
    } finally {
      await app.fastify.close();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

for (const kind of DB_KINDS) {
  describe(`answers match the OpenAPI document (${kind})`, () => {
    let svc: Service;
    let world: World;
    let limiter: RateLimiter;
    const blobs = new FlakyBlobs(mkdtempSync(join(tmpdir(), 'openapi-blobs-')));
    // The limiter's time: far ahead on every request (buckets always full), or held still to run one empty.
    let held: number | null = null;
    let time = Date.now();
    const limit = { freeze: () => { held = time; }, thaw: () => { held = null; } };

    before(async () => {
      limiter = new RateLimiter({ rate: 1, burst: 5 }, null, { now: () => held ?? (time += 60_000), syncMs: null });
      svc = await startService(kind, { blobs, rateLimiter: limiter, bodyMaxBytes: BODY_MAX, uploadMaxBytes: UPLOAD_MAX, idempotencyWaitMs: 50 });
      svc.clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
      const top = await svc.company('Top');
      const sub = await svc.company('Sub', top);
      const child = (await svc.certificate(sub)).client;
      const { client: api } = await svc.certificate(top, { impersonation: true });
      const tour = new Tour(new ResponseChecker(await servedDocument(svc)));
      world = {
        svc, tour, api, child, anonymous: svc.client(null), top, sub, blobs, bodyMaxBytes: BODY_MAX, uploadMaxBytes: UPLOAD_MAX,
        admin: await user(svc, top, { level: 'admin', canCreateCompanies: true }), readonly: await user(svc, top, { level: 'readonly' }),
      };
    });
    after(async () => {
      await svc?.close();
      await limiter?.close();
      rmSync(blobs.root, { recursive: true, force: true });
    });

    it('every answer of a tour of every endpoint, verb and refusal validates against its operation and status', async () => {
      await sweep(world, await run(world), limit);
      const { tour } = world;
      assert.deepEqual(tour.problems(), []);
      const operations = [...tour.checker.operations()];
      const succeeded = new Set(tour.verdicts.filter((v) => v.status < 300).map((v) => v.operationId));
      assert.deepEqual(operations.map((o) => o.op.operationId).filter((id) => !succeeded.has(id)), [], 'operations never answered with success');
      // (A store that does not answer at all is the readiness test's, above.)
      const missing = tour.missing(['getReadiness 503']);
      process.stderr.write(`${kind}: ${tour.verdicts.length} answers validated over ${operations.length} operations; `
        + `documented responses not produced: ${missing.length ? missing.join(', ') : 'none'}\n`);
      assert.deepEqual(missing, []);
    });
  });
}

// Answers recorded from the whole suite (API_RECORD=<file> npm test), checked when API_RECORDED names that file.
const recorded = process.env.API_RECORDED;
describe('recorded answers match the OpenAPI document', { skip: recorded ? false : 'set API_RECORDED to a file written with API_RECORD' }, () => {
  it('every recorded answer validates against its operation and status', async () => {
    const svc = await startService('sqlite');
    try {
      const checker = new ResponseChecker(await servedDocument(svc));
      const lines = readFileSync(recorded!, 'utf8').split('\n').filter((l) => l);
      const problems = lines.flatMap((l) => checker.check(JSON.parse(l) as Exchange).problems);
      process.stderr.write(`${lines.length} recorded answers checked, ${problems.length} problems\n`);
      assert.deepEqual(problems, []);
    } finally {
      await svc.close();
    }
  });
});
