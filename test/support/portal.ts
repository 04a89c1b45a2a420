// The portal over real HTTPS: a service with its portal listening, browsers as
// plain request sequences that keep the session cookie, and signed-in users.
import https from 'node:https';
import { addUser, setPassword } from '../../src/admin/accounts.ts';
import type { AppOptions } from '../../src/app.ts';
import type { Level } from '../../src/model/types.ts';
import { type DbKind, type Service, startService } from './harness.ts';

export interface PortalService extends Service {
  readonly portalPort: number;
}

export async function startPortal(kind: DbKind, options: Partial<AppOptions> = {}): Promise<PortalService> {
  const svc = await startService(kind, { ...options, portal: true });
  const server = svc.app.portal!.https;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  const portalPort = typeof address === 'object' && address ? address.port : 0;
  return Object.assign(Object.create(svc) as Service, svc, {
    portalPort,
    async close() {
      server.closeAllConnections();
      await svc.close();
    },
  });
}

export interface PageResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The body as sent (a PDF, a calendar). */
  readonly bytes: Buffer;
}

export interface PageRequest {
  readonly headers?: Record<string, string>;
  /** Form fields, sent as application/x-www-form-urlencoded. */
  readonly form?: Record<string, string>;
  readonly host?: string;
}

/** One browser: its own cookie (the session), and whatever host it says it asked for. */
export class Browser {
  cookie: string | null = null;
  constructor(readonly port: number, readonly host = 'localhost') {}

  request(method: string, path: string, o: PageRequest = {}): Promise<PageResponse> {
    const body = o.form ? new URLSearchParams(o.form).toString() : undefined;
    const headers: Record<string, string> = {
      host: `${o.host ?? this.host}:${this.port}`, ...(this.cookie ? { cookie: this.cookie } : {}),
      ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) } : {}),
      ...o.headers,
    };
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: this.port, method, path, headers, rejectUnauthorized: false, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const set = res.headers['set-cookie']?.[0];
          if (set) {
            const pair = set.split(';')[0]!;
            this.cookie = pair.endsWith('=') ? null : pair;
          }
          const bytes = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: bytes.toString('utf8'), bytes });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  get = (path: string, o?: PageRequest) => this.request('GET', path, o);
  post = (path: string, form: Record<string, string>, o: PageRequest = {}) => this.request('POST', path, { ...o, form });

  async signIn(username: string, password: string): Promise<PageResponse> {
    return this.post('/login', { username, password });
  }

  /** The form token of the page at `path` (every changing form carries it). */
  async formToken(path = '/account'): Promise<string> {
    const page = await this.get(path);
    const m = /name="csrf" value="([0-9a-f]+)"/.exec(page.text);
    if (!m) throw new Error(`no form token on ${path} (status ${page.status})`);
    return m[1]!;
  }
}

let users = 0;
/** A user with a password in the company; returns the username and password. */
export async function portalUser(svc: Service, companyId: number, level: Level = 'user'): Promise<{ id: number; username: string; password: string }> {
  const username = `person${++users}-${Math.random().toString(36).slice(2, 6)}`;
  const id = await addUser(svc.database, { companyId, username, email: `${username}@example.com`, level, firstName: 'Pat', lastName: 'Lee' });
  const password = `correct horse ${username}`;
  await setPassword(svc.database, id, password);
  return { id, username, password };
}
