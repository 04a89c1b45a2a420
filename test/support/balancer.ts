// HAProxy in front of `serve` processes, run from deploy/haproxy.cfg itself (only its
// addresses, ports, CA file and connection cap changed, each change asserted, so the
// recipe cannot drift from what is tested), and a paced load of reads and keyed writes through it.
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { join } from 'node:path';
import { after } from 'node:test';
import type { TestCert } from './certs.ts';
import { readResponse, type TestResponse } from './client.ts';
import { ROOT } from './root.ts';

/** Debian's HAProxy (`apt-get install haproxy`); HAPROXY names another build. */
export const HAPROXY = process.env.HAPROXY ?? '/usr/sbin/haproxy';
export const haproxyMissing = existsSync(HAPROXY) ? false : `no HAProxy at ${HAPROXY} (apt-get install haproxy, or set HAPROXY)`;
if (haproxyMissing && process.env.REQUIRE_HAPROXY === '1') throw new Error(`REQUIRE_HAPROXY=1 but ${haproxyMissing}`);

const live = new Set<ChildProcessWithoutNullStreams>();
after(() => {
  for (const child of live) child.kill('SIGKILL');
});

export interface Balancer {
  readonly port: number;
  /** Each server's state as HAProxy sees it (UP, DOWN, …), by name (app1, app2). */
  states(): Promise<Record<string, string>>;
  waitFor(server: string, state: 'UP' | 'DOWN', timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function replaceOnce(text: string, pattern: RegExp, by: string): string {
  assert.equal(text.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))?.length, 1, `deploy/haproxy.cfg has ${pattern} once`);
  return text.replace(pattern, by);
}

/** deploy/haproxy.cfg with the test's addresses and ports, in the foreground (no chroot, user or daemon), with a stats socket and fewer connections. */
export async function startBalancer(dir: string, o: { port: number; servers: readonly number[]; caFile: string }): Promise<Balancer> {
  let config = readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
  for (const line of [/^ {4}chroot .*$/m, /^ {4}user .*$/m, /^ {4}group .*$/m, /^ {4}daemon$/m]) config = replaceOnce(config, line, '');
  // Its maxconn needs twice as many file descriptors, which a test's shell may not allow.
  config = replaceOnce(config, /^ {4}maxconn 20000$/m, '    maxconn 2000');
  const socket = join(dir, 'haproxy.sock');
  config = replaceOnce(config, /^global$/m, `global\n    stats socket ${socket} level admin`);
  config = replaceOnce(config, /^ {4}bind :8443$/m, `    bind 127.0.0.1:${o.port}`);
  config = replaceOnce(config, /ca-file \/etc\/haproxy\/asset-tracker-ca\.pem/, `ca-file ${o.caFile}`);
  o.servers.forEach((port, i) => { config = replaceOnce(config, new RegExp(`^ {4}server app${i + 1} [0-9.]+:8443$`, 'm'), `    server app${i + 1} 127.0.0.1:${port}`); });
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const check = spawnSync(HAPROXY, ['-c', '-f', file], { encoding: 'utf8' });
  assert.equal(check.status, 0, `haproxy -c: ${check.stdout}${check.stderr}`);
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: 'pipe' });
  live.add(child);
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const exited = new Promise<void>((r) => child.once('close', () => { live.delete(child); r(); }));

  const states = () => new Promise<Record<string, string>>((resolve, reject) => {
    const c = net.connect(socket);
    let csv = '';
    c.on('connect', () => c.end('show stat\n'));
    c.on('data', (d: Buffer) => { csv += d.toString(); });
    c.on('error', reject);
    c.on('end', () => {
      const out: Record<string, string> = {};
      for (const line of csv.split('\n')) {
        const [proxy, server, ...rest] = line.split(',');
        if (proxy === 'asset_tracker_instances' && server?.startsWith('app')) out[server] = rest[15]!;
      }
      resolve(out);
    });
  });
  const deadline = Date.now() + 10_000;
  while (!existsSync(socket)) {
    if (Date.now() > deadline) assert.fail(`HAProxy did not start\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port: o.port,
    states,
    async waitFor(server, state, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const now = await states();
        if (now[server] === state) return;
        if (Date.now() > until) assert.fail(`HAProxy did not see ${server} ${state} within ${timeoutMs} ms (${JSON.stringify(now)})\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** GET of a plain-HTTP probe (the metrics listener's /healthz, /readyz): its status and body, or null when nothing answers. */
export function probe(port: number, path: string): Promise<{ status: number; body: unknown } | null> {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    }).on('error', () => resolve(null));
  });
}

export interface Sent {
  readonly id: number;
  readonly method: 'GET' | 'PUT';
  readonly key: string | null;
  readonly body: string | null;
  readonly startedAt: number;
  endedAt?: number;
  status?: number;
  error?: string;
}

/** Requests to one address through keep-alive connections from `localAddress`. */
export class Requester {
  readonly agent: https.Agent;
  constructor(private readonly port: number, ca: string, cert: TestCert, localAddress: string, maxSockets = 8) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets, localAddress, ca, cert: cert.certPem, key: cert.keyPem, servername: 'localhost' });
  }

  send(method: string, path: string, body: string | null, headers: Record<string, string> = {}): Promise<TestResponse> {
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: this.port, method, path, agent: this.agent, headers, timeout: 60_000 },
        (res) => void readResponse(res).then(resolve, reject));
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(body ?? undefined);
    });
  }

  close(): void { this.agent.destroy(); }
}

/** A paced load: `perSecond` requests a second, a share of them keyed PUTs of one new asset each, the rest GETs. */
export class PacedLoad {
  readonly sent: Sent[] = [];
  inFlight = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly requester: Requester, private readonly prefix: string, private readonly perSecond: number, private readonly writeShare = 0.3) {}

  start(): void {
    const every = 1000 / this.perSecond;
    const began = performance.now();
    let due = 0;
    // A tick every 10 ms sends what is due by then: the pace holds whatever the timers' lag.
    this.timer = setInterval(() => {
      const target = Math.floor((performance.now() - began) / every);
      while (due < target) { due++; this.one(); }
    }, 10);
  }

  private one(): void {
    const id = this.sent.length;
    const write = (id * 7919) % 100 < this.writeShare * 100;
    const entry: Sent = write
      ? { id, method: 'PUT', key: `${this.prefix}-${id}`, body: JSON.stringify({ asset_no: `${this.prefix}-${id}` }), startedAt: Date.now() }
      : { id, method: 'GET', key: null, body: null, startedAt: Date.now() };
    this.sent.push(entry);
    this.inFlight++;
    const done = this.attempt(entry).then((r) => { entry.status = r.status; }, (e: Error) => { entry.error = e.message; })
      .finally(() => { entry.endedAt = Date.now(); this.inFlight--; this.pending.delete(done); });
    this.pending.add(done);
  }

  attempt(entry: Sent): Promise<TestResponse> {
    return entry.method === 'PUT'
      ? this.requester.send('PUT', '/3.0/assets', entry.body, { 'idempotency-key': entry.key! })
      : this.requester.send('GET', '/3.0/assets', null);
  }

  /** Stops sending and waits for the answers of what was sent. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  get failed(): Sent[] { return this.sent.filter((s) => s.error !== undefined || (s.status !== 200 && s.status !== 201)); }
}
