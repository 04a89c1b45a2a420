// `npm run bench`: seeds 100k assets, then measures, with the server pinned to core 0
// and the load generator to core 1, (a) a bare Fastify route over the same mTLS
// transport and (b) GET /3.0/assets/next_check<today on the built service, and
// prints both and their ratio. BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3),
// BENCH_CONNECTIONS (16), BENCH_ASSETS (100000), BENCH_PG=1 adds (b) on PostgreSQL
// (BENCH_PG_URL, default postgres://root@127.0.0.1:5432/postgres, names the server).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { formatDate } from '../src/model/dates.ts';
import { createSelfSigned } from '../src/tls/x509.ts';
import type { Check, LoadJob, LoadResult } from './load.ts';
import { type Child, freePort, machineBusySeconds, pinningAvailable, procStats, startNode, stop, waitHealthy } from './processes.ts';
import { seedBench, type SeedSummary } from './seed.ts';

const int = (name: string, fallback: number) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${name} must be a positive integer (got "${v}")`);
  return Number(v);
};
const SECONDS = int('BENCH_SECONDS', 10);
const WARMUP = int('BENCH_WARMUP_SECONDS', 3);
const CONNECTIONS = int('BENCH_CONNECTIONS', 16);
const ASSETS = int('BENCH_ASSETS', 100_000);
const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const PG_DATABASE = 'asset_tracker_bench';
const PAGE_SIZE = 30;

const started = Date.now();
const dir = resolve('.bench');
const files = { serverCert: join(dir, 'tls', 'server.pem'), serverKey: join(dir, 'tls', 'server.key'), clientCert: join(dir, 'tls', 'client.pem'), clientKey: join(dir, 'tls', 'client.key') };
const say = (line: string) => process.stdout.write(`${line}\n`);

function writeCertificates(): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'tls'), { recursive: true });
  const server = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'] });
  const client = createSelfSigned({ cn: 'bench client' });
  writeFileSync(files.serverCert, server.certPem);
  writeFileSync(files.serverKey, server.keyPem);
  writeFileSync(files.clientCert, client.certPem);
  writeFileSync(files.clientKey, client.keyPem);
  return client.certPem;
}

async function seed(label: string, url: string | undefined, certPem: string, today: string): Promise<SeedSummary> {
  const t0 = Date.now();
  const database = openDatabase({ url, dataDir: join(dir, 'sqlite') });
  try {
    await migrate(database.db);
    const summary = await seedBench(database, { certPem, today, assets: ASSETS });
    // What autovacuum would soon do on a live PostgreSQL; the service never runs ANALYZE on SQLite.
    if (url) await sql`ANALYZE`.execute(database.db);
    say(`seeded ${summary.assetsTotal} assets and ${summary.reminders.seeded} reminders into ${label}`
      + ` (then the reminder job created ${summary.reminders.jobCreated} and delivered ${summary.reminders.jobDelivered}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return summary;
  } finally {
    await database.close();
  }
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try { await client.query(text); } finally { await client.end(); }
}

interface Row {
  readonly label: string;
  readonly load: LoadResult;
  readonly serverCpuPercent: number;
  /** CPU used during the measured run by anything but the server and the load generator (other jobs on the machine). */
  readonly otherCpuPercent: number;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
}

/** Starts the server on core 0, loads it from core 1, and returns the measured run. */
async function measure(pin: boolean, label: string, serverArgs: readonly string[], env: NodeJS.ProcessEnv, port: number, path: string, check: Check): Promise<Row> {
  say(`${label}: warming up ${WARMUP} s, measuring ${SECONDS} s, ${CONNECTIONS} connections, GET ${path}`);
  const server = startNode(pin, 0, serverArgs, { ...env, PORT: String(port), TLS_CERT_FILE: files.serverCert, TLS_KEY_FILE: files.serverKey });
  let load: Child | null = null;
  try {
    await waitHealthy(server, port);
    const job: LoadJob = {
      origin: `https://127.0.0.1:${port}`, path, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP,
      certFile: files.clientCert, keyFile: files.clientKey, check,
    };
    const l = startNode(pin, 1, ['--import', 'tsx', 'bench/load.ts', JSON.stringify(job)]);
    load = l;
    let cpuAtStart = 0;
    let busyAtStart = 0;
    l.process.stdout!.on('data', () => {
      if (cpuAtStart > 0 || !l.output().includes('MEASURING\n')) return;
      cpuAtStart = procStats(server.pid).cpuSeconds;
      busyAtStart = machineBusySeconds();
    });
    const code = await new Promise<number | null>((r) => l.process.once('close', r));
    const after = procStats(server.pid);
    const busy = machineBusySeconds() - busyAtStart;
    const line = /^RESULT (.*)$/m.exec(l.output());
    if (code !== 0 || !line) throw new Error(`load generator failed (exit ${code}):\n${l.output()}`);
    const result = JSON.parse(line[1]!) as LoadResult;
    const serverCpu = after.cpuSeconds - cpuAtStart;
    const other = busy - serverCpu - (result.clientCpuPercent / 100) * result.seconds;
    return {
      label, load: result, serverCpuPercent: (100 * serverCpu) / result.seconds, otherCpuPercent: Math.max(0, (100 * other) / result.seconds),
      rssMiB: after.rssMiB, peakRssMiB: after.peakRssMiB,
    };
  } finally {
    if (load) await stop(load);
    await stop(server);
  }
}

function printTable(rows: readonly Row[]): void {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'bytes/resp', 'server CPU', 'loadgen CPU', 'other CPU', 'server RSS MiB (peak)', 'b/a'];
  const base = rows[0]!.load.reqPerSec;
  const cells = rows.map((r, i) => [
    r.label, r.load.reqPerSec.toFixed(0), String(r.load.latencyMs.p50), String(r.load.latencyMs.p99), String(r.load.latencyMs.max),
    r.load.bytesPerResponse.toFixed(0), `${r.serverCpuPercent.toFixed(0)}%`, `${r.load.clientCpuPercent.toFixed(0)}%`, `${r.otherCpuPercent.toFixed(0)}%`,
    `${r.rssMiB.toFixed(0)} (${r.peakRssMiB.toFixed(0)})`, i === 0 ? '-' : (r.load.reqPerSec / base).toPrecision(2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const format = (c: readonly string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  say(`\n${format(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${cells.map(format).join('\n')}`);
  say('latencies have 1 ms resolution (autocannon); CPU 100% = one core; RSS measured after the run;'
    + ' "other CPU" is what the rest of the machine used meanwhile (PostgreSQL backends included)');
  const noisy = rows.filter((r) => r.otherCpuPercent > 15 && !r.label.includes('PostgreSQL'));
  if (noisy.length > 0) say(`WARNING: other processes used CPU during ${noisy.map((r) => r.label).join(', ')}; those numbers are low and noisy`);
}

async function main(): Promise<number> {
  const certPem = writeCertificates();
  const today = formatDate(new Date());
  const summary = await seed('SQLite', undefined, certPem, today);
  const scope = summary.companies.filter((c) => c.inScope);
  say(`the benchmark certificate (client ${summary.clientId}) belongs to "${scope[0]!.name}": its scope is companies `
    + `${scope.map((c) => `${c.id} ${c.name}`).join(', ')} (${scope.length} of ${summary.companies.length}),`
    + ` ${summary.assetsInScope} of ${summary.assetsTotal} assets, ${summary.overdueInScope} with next_check < ${today}`);

  const pin = pinningAvailable();
  const path = `/3.0/assets/next_check<${today}`;
  const check: Check = { kind: 'assets', totalRecords: summary.overdueInScope, pageSize: PAGE_SIZE, before: today, scope: scope.map((c) => c.id) };
  const service = (databaseUrl: string) => ({
    DATA_DIR: join(dir, 'sqlite'), DATABASE_URL: databaseUrl, HOST: '127.0.0.1', LOG_LEVEL: 'warn', PAGE_SIZE: String(PAGE_SIZE), BASE_URL: '',
  });
  const rows: Row[] = [];
  rows.push(await measure(pin, '(a) bare Fastify, mTLS, static 1 KB', ['--import', 'tsx', 'bench/baseline-server.ts'], {}, await freePort(), '/static', { kind: 'static' }));
  rows.push(await measure(pin, '(b) service, SQLite', ['dist/cli/main.js', 'serve'], service(''), await freePort(), path, check));

  if (process.env.BENCH_PG === '1') {
    await adminQuery(`DROP DATABASE IF EXISTS ${PG_DATABASE} WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE ${PG_DATABASE}`);
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${PG_DATABASE}`;
    try {
      await seed('PostgreSQL', url.toString(), certPem, today);
      rows.push(await measure(pin, '(b) service, PostgreSQL', ['dist/cli/main.js', 'serve'], service(url.toString()), await freePort(), path, check));
    } finally {
      await adminQuery(`DROP DATABASE IF EXISTS ${PG_DATABASE} WITH (FORCE)`);
    }
  }

  printTable(rows);
  say(`total time ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const failed = rows.filter((r) => Object.values(r.load.problems).some((n) => n > 0));
  for (const r of failed) {
    process.stderr.write(`\nFAILED ${r.label}: ${JSON.stringify(r.load.problems)} status codes ${JSON.stringify(r.load.statusCodes)}\n`
      + `  first unexpected body: ${r.load.firstMismatch ?? '(none: non-2xx or connection errors only)'}\n`);
  }
  return failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
