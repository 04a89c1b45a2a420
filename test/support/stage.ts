// Processes of the real CLI for the tests that drive it as an operator does:
// a stage (a temporary DATA_DIR and, for PostgreSQL, a throw-away database),
// one-shot commands, and long-running servers. Every process is tracked, so that
// none outlives a test file even when an assertion fails.
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import type { TestCert } from './certs.ts';
import { TestClient } from './client.ts';
import type { DbKind } from './harness.ts';
import { pgAdmin, pgUrl } from './templates.ts';

export { pgAdmin, PG_ADMIN_URL } from './templates.ts';

import { ROOT } from './root.ts';

export { ROOT };
const SOURCE_MAIN = join(ROOT, 'src/cli/main.ts');
/** test/run.ts sets TEST_CLI_BUILT=1 when dist/ was built from the sources as they are: the CLI starts three times faster from it. */
const BUILT_MAIN = process.env.TEST_CLI_BUILT === '1' ? join(ROOT, 'dist/cli/main.js') : null;

/** node's arguments for `asset-tracker ARGS…`, with JavaScript modules to preload (`--import`) first. */
export function cliArgv(args: readonly string[], preload: readonly string[] = []): string[] {
  const imports = preload.flatMap((p) => ['--import', p]);
  return BUILT_MAIN ? [...imports, BUILT_MAIN, ...args] : ['--import', 'tsx', ...imports, SOURCE_MAIN, ...args];
}
/** CLI_TIMEOUT_MS: longer for runs over large stores. */
const CLI_TIMEOUT_MS = Number(process.env.CLI_TIMEOUT_MS ?? 60_000);
const SERVER_TIMEOUT_MS = 60_000;
/** Settings a developer's shell may carry that would leak into the processes under test. */
const CONFIG_VARS = ['DATA_DIR', 'DATABASE_URL', 'PORT', 'HOST', 'BASE_URL', 'LOG_LEVEL', 'TLS_CERT_FILE', 'TLS_KEY_FILE',
  'TRUSTED_PROXIES', 'CLIENT_CERT_HEADER', 'HTTP_PORT', 'REDIS_URL', 'CURL_HOME', 'RATE_LIMIT', 'RATE_LIMIT_BURST', 'SHUTDOWN_GRACE_MS',
  'METRICS_PORT', 'METRICS_HOST', 'PORTAL_PORT', 'SHUTDOWN_DRAIN_MS', 'PROXY_PROTOCOL_FROM', 'PORTAL_BASE_URL', 'SMTP_URL', 'MAIL_FROM',
  'SMTP_CA_FILE', 'SMTP_TIMEOUT'];

/** This process's environment without the settings a developer's shell may carry, and then `settings`. */
export function cleanEnv(settings: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARS) delete e[name];
  return { ...e, ...settings };
}

// Processes: every one is tracked, so that none outlives the suite even when an assertion fails.

const live = new Set<ChildProcessWithoutNullStreams>();
after(() => {
  for (const child of live) child.kill('SIGKILL');
});

export interface Exit { readonly code: number | null; readonly signal: NodeJS.Signals | null }
export interface Result extends Exit { readonly stdout: string; readonly stderr: string }

export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, cliArgv(args), { cwd: ROOT, env, stdio: 'pipe' });
  live.add(child);
  child.once('close', () => live.delete(child));
  return child;
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv, stdin = ''): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawnCli(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS);
    child.once('error', (e) => { clearTimeout(timer); fail(e); });
    child.once('close', (code, signal) => { clearTimeout(timer); done({ code, signal, stdout, stderr }); });
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

/** Runs `fns` with at most `limit` at a time (each CLI process costs about a second of CPU). */
export async function limited<T>(limit: number, fns: readonly (() => Promise<T>)[]): Promise<T[]> {
  const out = new Array<T>(fns.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, fns.length) }, async () => {
    while (next < fns.length) {
      const i = next++;
      out[i] = await fns[i]!();
    }
  }));
  return out;
}

export const show = (r: Result) => `exit ${r.code} (${r.signal ?? 'no signal'})\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;

/** Asserts a command succeeded (exit 0, nothing on stderr) and returns what it printed. */
export function expectCliOk(r: Result): string {
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stderr, '', show(r));
  return r.stdout;
}

/** What a successful command printed with --json. */
export const cliJson = (r: Result): unknown => JSON.parse(expectCliOk(r));

// ---------------------------------------------------------------------------------------------
// A stage: a temporary DATA_DIR and, for PostgreSQL, a throw-away database.

export interface Stage {
  readonly kind: DbKind;
  readonly dir: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  cli(...args: string[]): Promise<Result>;
  dispose(): Promise<void>;
}

export async function createStage(kind: DbKind, dirPrefix = 'asset-tracker-cli-'): Promise<Stage> {
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  const dataDir = join(dir, 'data');
  let databaseUrl: string | undefined;
  let dbName: string | undefined;
  if (kind === 'postgres') {
    dbName = `asset_tracker_cli_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    try {
      await pgAdmin(`CREATE DATABASE ${dbName}`);
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    databaseUrl = pgUrl(dbName);
  }
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
    // No drain on SIGTERM unless a test asks for one: no balancer watches these servers.
    cleanEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PORTAL_PORT: '0', SHUTDOWN_DRAIN_MS: '0', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...extra });
  return {
    kind, dir, dataDir, databaseUrl, env,
    cli: (...args) => runCli(args, env()),
    async dispose() {
      try {
        if (dbName) await pgAdmin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export async function withStage(kind: DbKind, fn: (s: Stage) => Promise<void>, dirPrefix?: string): Promise<void> {
  const stage = await createStage(kind, dirPrefix);
  try {
    await fn(stage);
  } finally {
    await stage.dispose();
  }
}

/** The stage's store, opened as the operator's CLI opens it (the caller closes it). */
export const openStageDatabase = (stage: Stage) => openDatabase({ url: stage.databaseUrl, dataDir: stage.dataDir, poolSize: 2 });

/** Reads the stage's database directly (no mocks of our own database layer). */
export async function withDatabase<T>(stage: Stage, fn: (db: ReturnType<typeof openDatabase>['db']) => Promise<T>): Promise<T> {
  const database = openDatabase({ url: stage.databaseUrl, dataDir: stage.dataDir, poolSize: 1 });
  try {
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Long-running commands (serve, demo).

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  assert.ok(port > 0);
  return port;
}

export class Server {
  stdout = '';
  stderr = '';
  private readonly child: ChildProcessWithoutNullStreams;
  private exit: Exit | null = null;
  private readonly exited: Promise<Exit>;

  /**
   * `caFile`: the server certificate clients trust — TLS_CERT_FILE's, or the one the
   * server makes in its DATA_DIR/tls/ on first start.
   */
  constructor(args: readonly string[], env: NodeJS.ProcessEnv, readonly port: number, readonly portalPort: number | null,
    readonly caFile: string) {
    this.child = spawnCli(args, env);
    this.child.stdout.setEncoding('utf8').on('data', (s: string) => { this.stdout += s; });
    this.child.stderr.setEncoding('utf8').on('data', (s: string) => { this.stderr += s; });
    this.exited = new Promise((r) => this.child.once('close', (code, signal) => r(this.exit = { code, signal })));
  }

  static async start(stage: Stage, command: 'serve' | 'demo', env: Record<string, string> = {}): Promise<Server> {
    const port = await freePort();
    // The portal gets a free port of its own (its default, 8444, would be shared by servers running side by side).
    const portalPort = env.PORTAL_PORT === undefined ? await freePort() : Number(env.PORTAL_PORT) || null;
    const all = stage.env({ PORT: String(port), HOST: '127.0.0.1', BASE_URL: `https://localhost:${port}`, PORTAL_PORT: String(portalPort ?? 0), ...env });
    return new Server([command], all, port, portalPort, all.TLS_CERT_FILE ?? join(all.DATA_DIR!, 'tls', 'server.pem'));
  }

  /** Sends a signal without waiting for its effect. */
  signal(signal: NodeJS.Signals): void { this.child.kill(signal); }

  /** The exit, however it came. */
  get exitStatus(): Promise<Exit> { return this.exited; }

  get baseUrl(): string { return `https://localhost:${this.port}`; }
  private get output(): string { return `--- stdout\n${this.stdout}--- stderr\n${this.stderr}`; }

  async waitForOutput(pattern: RegExp, timeoutMs = SERVER_TIMEOUT_MS): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(this.stdout);
      if (m) return m;
      if (this.exit) assert.fail(`the server exited (${this.exit.code}, ${this.exit.signal}) before printing ${pattern}\n${this.output}`);
      if (Date.now() > deadline) assert.fail(`no ${pattern} within ${timeoutMs} ms\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits until /healthz answers over TLS with the server certificate (`caFile`'s unless given). */
  async waitUntilReady(caFile = this.caFile, timeoutMs = SERVER_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exit) assert.fail(`the server exited (${this.exit.code}, ${this.exit.signal})\n${this.output}`);
      if (existsSync(caFile)) {
        const probe = new TestClient(this.port, readFileSync(caFile, 'utf8'));
        try {
          if ((await probe.get('/healthz')).status === 200) return;
        } catch {
          // not listening yet
        } finally {
          probe.close();
        }
      }
      if (Date.now() > deadline) assert.fail(`the server did not become ready within ${timeoutMs} ms\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** A client of the server trusting its certificate, with `cert` as its own (none: anonymous). */
  client(cert: TestCert | null = null): TestClient {
    return new TestClient(this.port, readFileSync(this.caFile, 'utf8'), cert);
  }

  /** SIGTERM, then the exit it caused; SIGKILL (and a failure) when it does not stop in time. */
  async stop(timeoutMs = 15_000): Promise<Exit> {
    if (!this.exit) this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((r) => { timer = setTimeout(() => r(null), timeoutMs); });
    const exit = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (exit) return exit;
    this.child.kill('SIGKILL');
    await this.exited;
    return assert.fail(`the server did not stop within ${timeoutMs} ms of SIGTERM\n${this.output}`);
  }

  /** For `finally`: stops it whatever state it is in. */
  async dispose(): Promise<void> {
    if (!this.exit) this.child.kill('SIGKILL');
    await this.exited;
  }
}
