// The fixed-rate load generator (pinned by run.ts): GETs sent at evenly spaced
// times over keep-alive mTLS connections, each timed from the moment it was due
// (so a late send counts against the server, no coordinated omission), every body
// checked. autocannon's overallRate is no use here: each connection sends its
// share of a second's requests at once when the second starts, so the requests
// arrive in one burst per second and the median waits for half of that burst —
// about 1/8 s at a quarter of the peak rate, however fast the server is.
// Reads its job as JSON from argv[2]; prints `MEASURING` when the measured part
// starts and `RESULT <json>` at the end.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { problemOf } from './checks.ts';
import type { LoadJob } from './load.ts';
import { announceMeasuring, percentile, printResult } from './result.ts';

/** A LoadJob at a fixed rate; `connections` is the most open at once (requests queue when all are busy). */
export interface PacedJob extends LoadJob {
  /** Requests per second. */
  readonly rate: number;
}

interface Outcome { readonly status: number; readonly body: string; readonly error: boolean }

async function main(job: PacedJob): Promise<void> {
  const url = new URL(job.origin);
  const agent = new https.Agent({
    keepAlive: true, maxSockets: job.connections, cert: readFileSync(job.certFile), key: readFileSync(job.keyFile),
    rejectUnauthorized: false, minVersion: 'TLSv1.2',
  });
  const get = () => new Promise<Outcome>((resolve) => {
    const req = https.get({ agent, host: url.hostname, port: url.port, path: job.path, servername: 'localhost' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), error: false }));
      res.on('error', () => resolve({ status: 0, body: '', error: true }));
    });
    req.on('error', () => resolve({ status: 0, body: '', error: true }));
  });

  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const problems = { non2xx: 0, errors: 0, timeouts: 0, mismatches: 0 };
  let firstMismatch: string | null = null;
  let bytes = 0;
  let ok = 0;
  const pending = new Set<Promise<void>>();
  const send = (due: number, measured: boolean) => {
    const done = get().then((o) => {
      const ms = performance.now() - due;
      if (o.error) problems.errors++;
      else if (o.status < 200 || o.status >= 300) problems.non2xx++;
      else {
        const problem = problemOf(o.body, job.path, job.check);
        if (problem !== null) {
          problems.mismatches++;
          firstMismatch ??= `${problem}: ${o.body.slice(0, 300)}`;
        }
      }
      if (!measured || o.error) return;
      latencies.push(ms);
      if (o.status >= 200 && o.status < 300) ok++;
      bytes += o.body.length;
      statusCodes[o.status] = (statusCodes[o.status] ?? 0) + 1;
    });
    pending.add(done);
    void done.then(() => pending.delete(done));
  };

  const interval = 1000 / job.rate;
  const start = performance.now();
  const measuredFrom = start + job.warmupSeconds * 1000;
  const end = measuredFrom + job.seconds * 1000;
  let cpu = process.cpuUsage();
  let announced = false;
  for (let i = 0; ; i++) {
    const due = start + i * interval;
    if (due >= end) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (!announced && due >= measuredFrom) {
      announced = true;
      announceMeasuring();
      cpu = process.cpuUsage();
    }
    send(due, due >= measuredFrom);
  }
  await Promise.all(pending);
  const used = process.cpuUsage(cpu);
  agent.destroy();
  const sorted = [...latencies].sort((a, b) => a - b);
  printResult({
    reqPerSec: latencies.length / job.seconds,
    ok,
    seconds: job.seconds,
    bytesPerResponse: latencies.length > 0 ? bytes / latencies.length : 0,
    latencyMs: { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] ?? NaN },
    problems,
    statusCodes,
    clientCpuPercent: (100 * (used.user + used.system)) / (job.seconds * 1e6),
    firstMismatch,
  });
}

await main(JSON.parse(process.argv[2]!) as PacedJob);
