// Helpers of the workflow tests (reminders, uploads, metadata and moveasset):
// users with sessions, a reminder run at a chosen instant, and a streaming HTTPS
// request whose body comes from a generator (uploads larger than memory should be).
import assert from 'node:assert/strict';
import https from 'node:https';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pipeline } from 'node:stream/promises';
import { sql } from 'kysely';
import { addUser, setPassword } from '../../src/admin/accounts.ts';
import { runReminders, type ReminderRun } from '../../src/jobs/reminders.ts';
import type { Level } from '../../src/model/types.ts';
import type { TestCert } from './certs.ts';
import { type TestClient, type TestResponse, testResponse } from './client.ts';
import { TestClock, type Service } from './harness.ts';
import type { LoggedIn } from './api.ts';

let counter = 0;
export const uniqueName = (prefix: string) => `${prefix}${++counter}${Math.random().toString(36).slice(2, 6)}`;

export interface User { readonly id: number; readonly username: string; readonly password: string }

/** A user of the company with a password, created as the operator would; `permissions` JSON replaces the level when given. */
export async function user(svc: Service, companyId: number,
  o: { level?: Level; canCreateCompanies?: boolean; reminders?: 0 | 1; username?: string; password?: string } = {}): Promise<User> {
  const username = o.username ?? uniqueName('u');
  const id = await addUser(svc.database, { companyId, username, email: `${username}@example.com`, level: o.level }, svc.clock);
  if (o.canCreateCompanies !== undefined) {
    const permissions = JSON.stringify({ level: o.level ?? 'user', can_create_companies: o.canCreateCompanies });
    await svc.database.db.updateTable('users').set({ permissions }).where('id', '=', id).execute();
  }
  if (o.reminders !== undefined) await svc.database.db.updateTable('users').set({ reminders: o.reminders }).where('id', '=', id).execute();
  const password = o.password ?? `pw-${uniqueName('')}-long-enough`;
  await setPassword(svc.database, id, password, svc.clock);
  return { id, username, password };
}

/** `Authorization: Basic base64("session:" + token)`. */
export const sessionHeader = (token: string) => ({ authorization: `Basic ${Buffer.from(`session:${token}`).toString('base64')}` });

/** Logs `u` in through an impersonation certificate's client; returns the session headers. */
export async function login(client: TestClient, u: User): Promise<Record<string, string>> {
  const res = await client.post('/3.0/login', { username: u.username, password: u.password });
  assert.equal(res.status, 200, `login of ${u.username}: ${res.text}`);
  return sessionHeader(res.reply<LoggedIn>().user_token);
}

/** One reminder run with the clock at `instant` (ISO text). */
export const runAt = (svc: Service, instant: string): Promise<ReminderRun> => runReminders(svc.database, new TestClock(Date.parse(instant)));

export async function count(svc: Service, query: ReturnType<typeof sql>): Promise<number> {
  const { rows } = await query.execute(svc.database.db);
  return Number((rows[0] as { n: number | string }).n);
}

export interface StreamedResponse extends TestResponse {
  /** Body bytes the client had handed to the socket when the response began. */
  readonly sentBeforeResponse: number;
  /** The response body as bytes. */
  readonly raw: Buffer;
}

/**
 * A request whose body is pulled from `source` as the socket takes it (chunked
 * unless a content-length header is given). The service may answer before the
 * body is complete (413, 415): the answer is returned and the rest of the body
 * is dropped.
 */
export function streamRequest(port: number, cert: TestCert, method: string, path: string,
  headers: Record<string, string>, source: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<StreamedResponse> {
  const agent = new https.Agent({ cert: cert.certPem, key: cert.keyPem, rejectUnauthorized: false, servername: 'localhost' });
  let sent = 0;
  const counted = Readable.from((async function* () {
    for await (const chunk of source) {
      sent += chunk.length;
      yield chunk;
    }
  })(), { objectMode: false });
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = https.request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      answered = true;
      const sentBeforeResponse = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        agent.destroy();
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        resolve(Object.assign(testResponse(res.statusCode ?? 0, res.headers, text), { raw, sentBeforeResponse }));
      });
      res.on('error', reject);
    });
    req.on('error', (e) => { if (!answered) reject(e); });
    pipeline(counted, req).catch((e: Error) => { if (!answered && !req.destroyed) reject(e); });
  });
}

/** GET with the response body as bytes (downloads). */
export const getRaw = (port: number, cert: TestCert, path: string, headers: Record<string, string> = {}) =>
  streamRequest(port, cert, 'GET', path, headers, []);

/** `total` bytes: `head` followed by filler, yielded in chunks of one reused buffer (the client holds no copy). */
export function* bytes(head: Buffer, total: number, chunkSize = 64 * 1024): Generator<Buffer> {
  yield head;
  const filler = Buffer.alloc(chunkSize, 0x41);
  let left = total - head.length;
  while (left > 0) {
    const n = Math.min(chunkSize, left);
    yield n === chunkSize ? filler : filler.subarray(0, n);
    left -= n;
  }
}

type Gc = (options?: { type?: 'major' | 'minor' }) => void;

/**
 * V8's `gc`. Without --expose-gc the flag is switched on at run time and `gc`
 * taken from a fresh context (a documented V8 flag, used only by these tests).
 */
const gc: Gc = (() => {
  const exposed = (globalThis as { gc?: Gc }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Gc;
})();

export interface MemoryReading { readonly rss: number; readonly arrayBuffers: number; readonly heapUsed: number }

const reading = (): MemoryReading => {
  const m = process.memoryUsage();
  return { rss: m.rss, arrayBuffers: m.arrayBuffers, heapUsed: m.heapUsed };
};

/**
 * Samples the process memory until stopped and returns the highest values seen.
 * Each sample first runs a young-generation collection (cheap), so what is
 * measured is memory still held, not chunks already dropped that V8 has not yet
 * freed. RSS alone can hide a buffered body in pages the allocator kept from
 * earlier work, so the bytes held by ArrayBuffers (every Buffer) are watched too.
 */
export function memorySampler(intervalMs = 10): { stop(): MemoryReading } {
  let peak = reading();
  const sample = () => {
    const r = reading();
    peak = { rss: Math.max(peak.rss, r.rss), arrayBuffers: Math.max(peak.arrayBuffers, r.arrayBuffers), heapUsed: Math.max(peak.heapUsed, r.heapUsed) };
  };
  const timer = setInterval(() => {
    gc({ type: 'minor' });
    sample();
  }, intervalMs);
  return { stop() { clearInterval(timer); sample(); return peak; } };
}

/** A settled reading, after full collections. */
export async function settledMemory(): Promise<MemoryReading> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return reading();
}
