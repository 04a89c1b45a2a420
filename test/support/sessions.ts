// Impersonation-mode helpers: users with passwords, logins, calls
// carrying a session header, and a record of every secret a test used and every
// response it saw, so that a final check can show none leaked.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Level } from '../../src/model/types.ts';
import type { RequestOptions, TestClient, TestResponse } from './client.ts';
import type { Service } from './harness.ts';
import { endpointOf, type LoggedIn } from './api.ts';
import type { Envelope } from './api.ts';
import { sessionHeader, uniqueName, user } from './workflows.ts';

export { sessionHeader, uniqueName };

export const BAD_SESSION = 'Bad session token.';
export const BAD_LOGIN = 'Invalid username or password';

/** Passwords and tokens a service has seen, and every response it gave, per service. */
interface Trail { readonly secrets: Set<string>; readonly responses: TestResponse[]; readonly logs: string[] }
const trails = new WeakMap<Service, Trail>();

export function trail(svc: Service): Trail {
  let t = trails.get(svc);
  if (!t) trails.set(svc, (t = { secrets: new Set(), responses: [], logs: [] }));
  return t;
}

/** A log stream for `startService(kind, { logLevel: 'info', logStream })` whose lines land in the service's trail. */
export function logCapture(): { stream: { write(line: string): void }; attach(svc: Service): void } {
  const early: string[] = [];
  let target: string[] = early;
  return {
    stream: { write: (line: string) => void target.push(line) },
    attach(svc) { const t = trail(svc); t.logs.push(...early); target = t.logs; },
  };
}

/** A client of the API through one certificate that records every response (optionally inside a session). */
export class Api {
  constructor(readonly svc: Service, readonly client: TestClient, readonly token: string | null = null) {}

  /** The same certificate acting in the session `token`. */
  as(token: string | null): Api { return new Api(this.svc, this.client, token); }

  async request(method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> {
    const headers = { ...(this.token ? sessionHeader(this.token) : {}), ...o.headers };
    const res = await this.client.request(method, path, { ...o, headers });
    trail(this.svc).responses.push(res);
    return res;
  }

  get = (path: string, o?: RequestOptions) => this.request('GET', `/3.0/${path}`, o);
  post = (path: string, body: unknown, o: RequestOptions = {}) => this.request('POST', `/3.0/${path}`, { ...o, body });
  put = (path: string, body: unknown, o: RequestOptions = {}) => this.request('PUT', `/3.0/${path}`, { ...o, body });
  delete = (path: string, o?: RequestOptions) => this.request('DELETE', `/3.0/${path}`, o);

  /** POST /3.0/login; remembers the password (and the token) as secrets. */
  async login(username: string, password: string, extra: Record<string, unknown> = {}, o: RequestOptions = {}): Promise<TestResponse> {
    // (Shorter strings are not passwords the service could accept, and may occur anywhere.)
    if (password.length >= 8) trail(this.svc).secrets.add(password);
    const res = await this.request('POST', '/3.0/login', { ...o, body: { username, password, ...extra } });
    if (res.status === 200) trail(this.svc).secrets.add(res.reply<LoggedIn>().user_token);
    return res;
  }

  /** Logs in (which must succeed) and returns an Api acting in the new session. */
  async session(user: TestUser): Promise<Api> {
    const res = await this.login(user.username, user.password);
    assert.equal(res.status, 200, `login of ${user.username}: ${res.text}`);
    return this.as(res.reply<LoggedIn>().user_token);
  }
}

export interface TestUser { readonly id: number; readonly username: string; readonly password: string; readonly companyId: number }

/** A user of the company with a password, created as the operator would; `permissions` overrides the level. */
export async function makeUser(svc: Service, companyId: number,
  o: { level?: Level; canCreateCompanies?: boolean; password?: string; username?: string } = {}): Promise<TestUser> {
  const password = o.password ?? `pw-${uniqueName('')}-${Math.random().toString(36).slice(2)}`;
  trail(svc).secrets.add(password);
  return { ...await user(svc, companyId, { ...o, username: o.username ?? uniqueName('user'), password }), companyId };
}

export { expectError, expectOk } from './api.ts';

/** The `request.session` member of a session call: exact members, in order. */
export function expectSession(res: TestResponse, svc: Service, token: string, user: { id: number; companyId: number }): void {
  const s = res.envelope.request.session;
  assert.deepEqual(Object.keys(s!), ['hash', 'time', 'expiry', 'company_id', 'user_id'], res.text);
  const now = Math.floor(svc.clock.now().getTime() / 1000);
  assert.deepEqual(s, { hash: token, time: now, expiry: now + 86_400, company_id: user.companyId, user_id: user.id });
}

const HOUR = 3_600_000;
export const hours = (n: number) => n * HOUR;

/**
 * Nothing a test used as a password or token appears in the audit table (every
 * column) or any other table, the service's log lines, or any response body (the session hash of
 * `request.session` is the token by contract, so that member is left out; the
 * login reply that hands out the token is left out too).
 */
export async function assertNoSecretsLeaked(svc: Service): Promise<void> {
  const t = trail(svc);
  assert.ok(t.secrets.size > 0, 'the tests used secrets');
  const audit = await svc.database.db.selectFrom('auditlog').selectAll().execute();
  assert.ok(audit.length > 0);
  const auditText = JSON.stringify(audit);
  // Every other table too (sessions keep only a hash of the token, users only a password hash).
  const tables = (await svc.database.db.introspection.getTables()).map((t) => t.name);
  assert.ok(tables.includes('sessions') && tables.includes('users'), tables.join());
  const dump: Record<string, unknown[]> = {};
  for (const table of tables) {
    const { rows } = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(svc.database.db);
    dump[table] = rows;
  }
  const dbText = JSON.stringify(dump, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : Buffer.isBuffer(v) ? v.toString('latin1') : v));
  const bodies = t.responses.filter((r) => !(r.status === 200 && endpointOf(r) === 'login')).map((r) => {
    try {
      const body = JSON.parse(r.text) as Partial<Envelope> | null;
      if (body?.request?.session) body.request.session.hash = '(token)';
      return JSON.stringify(body);
    } catch {
      return r.text;
    }
  });
  const logText = t.logs.join('');
  for (const secret of t.secrets) {
    assert.ok(!auditText.includes(secret), `the audit table holds a secret: ${secret}`);
    assert.ok(!dbText.includes(secret), `the database holds a secret: ${secret}`);
    assert.ok(!logText.includes(secret), `the log holds a secret: ${secret}`);
    for (const b of bodies) assert.ok(!b.includes(secret), `a response holds a secret: ${secret}: ${b.slice(0, 300)}`);
  }
  // JSON escaping must not hide a secret either.
  for (const secret of t.secrets) {
    const escaped = JSON.stringify(secret).slice(1, -1);
    assert.ok(!auditText.includes(escaped) && !dbText.includes(escaped) && !logText.includes(escaped));
  }
}
