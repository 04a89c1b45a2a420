// A broad tour of the API whose every answer is checked against the OpenAPI
// document: the scripted run (openapi-run.ts) over every endpoint with real data
// and the refusals each can give, then sweeps that send every operation of the
// document each refusal every request can meet.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { sql } from 'kysely';
import { formatDatetime } from '../../src/model/dates.ts';
import { BlobStore, storageError } from '../../src/storage/blobs.ts';
import type { RequestOptions, TestClient, TestResponse } from './client.ts';
import type { Service } from './harness.ts';
import type { ResponseChecker, Verdict } from './openapi-check.ts';
import type { Operation } from './openapi-doc.ts';
import { sessionHeader, type User, user } from './workflows.ts';
import type { LoggedIn } from './api.ts';

/** A store that fails on demand, for the storage errors (503). */
export class FlakyBlobs extends BlobStore {
  failing = false;

  override async receive(body: Readable, maxBytes: number) {
    if (this.failing) throw storageError('the disk is full');
    return super.receive(body, maxBytes);
  }

  override async open(id: string) {
    if (this.failing) throw storageError('the disk is gone');
    return super.open(id);
  }
}

export const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

/** Sends requests and keeps the verdict on each answer. */
export class Tour {
  readonly verdicts: Verdict[] = [];
  constructor(readonly checker: ResponseChecker) {}

  async send(client: TestClient, method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> {
    const res = await client.request(method, path, o);
    const sent = o.body === undefined ? undefined : typeof o.body === 'string' || Buffer.isBuffer(o.body) ? o.body.toString() : JSON.stringify(o.body);
    this.verdicts.push(this.checker.check({ method, path, status: res.status, headers: res.headers, text: res.text, requestBody: sent }));
    return res;
  }

  /** Sends and asserts the status; a GET answered with an ETag is sent again with it, for its 304. The first answer. */
  async expect(status: number, client: TestClient, method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> {
    const res = await this.send(client, method, path, o);
    assert.equal(res.status, status, `${method} ${path}: expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
    const etag = res.headers.etag;
    if (method === 'GET' && status === 200 && typeof etag === 'string' && path !== '/3.0/logout') {
      // A new random password each time: only `*` matches it.
      const tag = path === '/3.0/randompassword' ? '*' : etag;
      const again = await this.send(client, method, path, { ...o, headers: { ...o.headers, 'if-none-match': tag } });
      assert.equal(again.status, 304, `${method} ${path} with If-None-Match ${etag}: ${again.status} ${again.text.slice(0, 300)}`);
    }
    return res;
  }

  problems(): string[] { return this.verdicts.flatMap((v) => v.problems); }

  /** `operationId status` of every documented response no answer showed, but those in `elsewhere`. */
  missing(elsewhere: readonly string[] = []): string[] {
    const seen = new Set([...this.verdicts.map((v) => `${v.operationId} ${v.status}`), ...elsewhere]);
    const out: string[] = [];
    for (const { op } of this.checker.operations()) {
      for (const status of Object.keys(op.responses)) if (!seen.has(`${op.operationId} ${status}`)) out.push(`${op.operationId} ${status}`);
    }
    return out;
  }
}

/** One request for an operation of the document, on concrete ids. */
export interface Target { readonly id: string; readonly method: string; readonly path: string; readonly op: Operation; readonly template: string }

/** Whether the operation takes filters in the query string (`?filter=`). */
export const takesQueryFilters = (op: Operation): boolean => op.parameters?.some((p) => p.$ref === '#/components/parameters/Filter') === true;

/**
 * The path of a request with `filters`: in its `{filters}` segments, or, on a path without any, in the query string
 * (the update and delete that take their filters there only).
 */
export function withFilters(template: string, op: Operation, filters: string): string {
  if (template.includes('{filters}')) return template.replace('{filters}', filters);
  return takesQueryFilters(op) ? `${template}?${filters.split('/').map((f) => `filter=${encodeURIComponent(f)}`).join('&')}` : template;
}

export function targets(checker: ResponseChecker, o: { filters: string; token: string }): Target[] {
  return [...checker.operations()].map(({ template, method, op }) => ({
    id: op.operationId, method: method.toUpperCase(), op, template,
    path: withFilters(template, op, o.filters).replace('{token}', o.token),
  }));
}

export const documents = (t: Target, status: number) => t.op.responses[String(status)] !== undefined;

/** A body the operation accepts in shape (the sweeps' refusals come before it is read). */
export const bodyOf = (t: Target): string | Buffer | undefined =>
  !t.op.requestBody ? undefined : t.op.requestBody.content['application/json'] ? '{}' : PDF;

export interface World {
  readonly svc: Service;
  readonly tour: Tour;
  /** Basic mode, impersonation allowed, the top company. */
  readonly api: TestClient;
  /** A certificate of a child company, without impersonation. */
  readonly child: TestClient;
  readonly anonymous: TestClient;
  readonly admin: User;
  readonly readonly: User;
  readonly blobs: FlakyBlobs;
  readonly bodyMaxBytes: number;
  readonly uploadMaxBytes: number;
  readonly top: number;
  readonly sub: number;
}

/** The ids the run made. */
export interface Made { asset: number; file: number; token: string; location: number; user: number }

/** Every operation, each refusal every request can meet; `internal` last, as it breaks the store. */
export async function sweep(w: World, made: Made, limit: { freeze(): void; thaw(): void }): Promise<void> {
  const { tour, svc } = w;
  const all = targets(tour.checker, { filters: 'id=99999999', token: made.token });
  const api = all.filter((t) => t.path.startsWith('/3.0/'));
  const send = (client: TestClient, t: Target, o: RequestOptions = {}) => tour.send(client, t.method, t.path, { body: bodyOf(t), ...o });
  const check = (res: TestResponse, status: number, t: Target) =>
    assert.equal(res.status, status, `${t.method} ${t.path}: expected ${status}, got ${res.status}: ${res.text.slice(0, 200)}`);

  for (const t of api) check(await send(w.anonymous, t), 401, t);
  const badSession = { headers: sessionHeader('0'.repeat(64)) };
  for (const t of api.filter((x) => x.id !== 'login')) check(await send(w.api, t, badSession), 401, t);
  for (const t of all) check(await send(w.api, t, { headers: { 'x-filler': 'f'.repeat(20_000) } }), 431, t);
  for (const t of api.filter((x) => documents(x, 413))) {
    const max = t.id === 'uploadFile' ? w.uploadMaxBytes : w.bodyMaxBytes;
    check(await send(w.api, t, { body: Buffer.alloc(max + 1, 0x20) }), 413, t);
  }
  for (const t of api.filter((x) => documents(x, 414))) {
    check(await tour.send(w.api, t.method, t.template.replace(/\{\w+\}/, `id=${'1'.repeat(9000)}`), { body: bodyOf(t) }), 414, t);
  }
  // A list that may answer JSON, CSV or (some) PDF, asked for none of them: 406.
  // (The filters come first: the change feed's filter names `seq`, as it has no `id`.)
  for (const t of api.filter((x) => documents(x, 406))) {
    const path = t.id.startsWith('listChanges') ? t.path.replace(/\bid(%3D|=)/, 'seq$1') : t.path;
    check(await tour.send(w.api, t.method, path, { headers: { accept: 'application/json;q=0' } }), 406, t);
  }
  await sweepHeaders(w, made, api);
  const viewer = await user(svc, w.top, { level: 'readonly' });
  const login = await w.api.request('POST', '/3.0/login', { body: { username: viewer.username, password: viewer.password } });
  assert.equal(login.status, 200, login.text);
  const asViewer = { headers: sessionHeader(login.reply<LoggedIn>().user_token) };
  // Operations a readonly session may not call.
  for (const t of api.filter((x) => ['user', 'admin', 'creator'].includes(x.op['x-session-level'] ?? ''))) check(await send(w.api, t, asViewer), 403, t);
  limit.freeze();
  try {
    const { client } = await svc.certificate(w.top);
    for (let i = 0; i < 10; i++) await client.get('/3.0/endpoints');
    for (const t of api) check(await send(client, t), 429, t);
  } finally {
    limit.thaw();
  }
  // The store breaks: every request needs its certificate looked up.
  await sql`ALTER TABLE clients RENAME TO clients_away`.execute(svc.database.db);
  for (const t of api) check(await send(w.api, t), 500, t);
}

/**
 * The refusals of the write headers: a key held for another
 * request (422) or by one still running (409), and a version no record has (412).
 */
async function sweepHeaders(w: World, made: Made, api: readonly Target[]): Promise<void> {
  const { tour, svc } = w;
  const { client, info } = await svc.certificate(w.top, { impersonation: true });
  const hold = async (t: Target, key: string, running: boolean) => {
    const body = bodyOf(t);
    const hash = createHash('sha256').update('json\n').update(body ?? '').digest('hex');
    const expires = formatDatetime(new Date(svc.clock.now().getTime() + 3_600_000));
    await sql`INSERT INTO idempotency_keys (client_id, user_id, ${sql.ref('key')}, verb, path, body_hash, owner, locked_until, expires,
        status, answered, response)
      VALUES (${info.id}, 0, ${key}, ${t.method}, ${running ? t.path : '/elsewhere'}, ${hash}, 'tour', ${expires}, ${expires},
        ${running ? null : 200}, ${running ? null : 0}, ${running ? null : '{}'})`.execute(svc.database.db);
    return tour.send(client, t.method, t.path, { body, headers: { 'idempotency-key': key } });
  };
  const expect = (res: TestResponse, status: number, t: Target) =>
    assert.equal(res.status, status, `${t.method} ${t.path}: expected ${status}, got ${res.status}: ${res.text.slice(0, 200)}`);
  for (const t of api.filter((x) => documents(x, 422))) {
    expect(await hold(t, `mismatch ${t.id}`, false), 422, t);
    expect(await hold(t, `running ${t.id}`, true), 409, t);
  }
  // moveasset's If-Match speaks of the asset its body names; elsewhere no record matches the filters.
  const valid: Record<string, string> = {
    moveAsset: JSON.stringify({ asset_id: made.asset, company_id: w.top }), setPassword: JSON.stringify({ new_password: 'a valid password' }),
    setPasswordByQuery: JSON.stringify({ new_password: 'a valid password' }),
  };
  for (const t of api.filter((x) => documents(x, 412))) {
    const body = valid[t.id] ?? bodyOf(t);
    expect(await tour.send(client, t.method, t.path, { body, headers: { 'if-match': '999999' } }), 412, t);
  }
}
