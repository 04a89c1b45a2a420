// The W6 client (pinned by run.ts): one request at a time over one keep-alive mTLS
// connection, each timed from sending to the last byte of the answer and its body
// checked. Alternates the request bodies so that every request really changes the
// rows. Reads its job as JSON from argv[2]; prints `MEASURING` after the warm-ups
// and `RESULT <json>` at the end.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { Socket } from 'node:net';
import { type Check, problemOf } from './checks.ts';
import { announceMeasuring, percentile, printResult } from './result.ts';

export interface SequentialJob {
  readonly origin: string;
  readonly method: 'POST';
  readonly path: string;
  /** Sent in turn, one per request. */
  readonly bodies: readonly string[];
  readonly warmups: number;
  readonly iterations: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly check: Check;
}

interface Answer { readonly status: number; readonly body: string; readonly ms: number; readonly socket: Socket }

function send(agent: https.Agent, job: SequentialJob, body: string): Promise<Answer> {
  const url = new URL(job.origin);
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = https.request({
      agent, host: url.hostname, port: url.port, method: job.method, path: job.path, servername: 'localhost',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: Number(process.hrtime.bigint() - t0) / 1e6, socket: req.socket!,
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function main(job: SequentialJob): Promise<void> {
  const agent = new https.Agent({
    keepAlive: true, maxSockets: 1, cert: readFileSync(job.certFile), key: readFileSync(job.keyFile), rejectUnauthorized: false, minVersion: 'TLSv1.2',
  });
  const sockets = new Set<Socket>();
  const times: number[] = [];
  const statusCodes: Record<string, number> = {};
  let mismatches = 0;
  let non2xx = 0;
  let bytes = 0;
  let firstMismatch: string | null = null;
  let cpu = process.cpuUsage();
  let started = 0;
  for (let i = 0; i < job.warmups + job.iterations; i++) {
    if (i === job.warmups) {
      announceMeasuring();
      cpu = process.cpuUsage();
      started = performance.now();
    }
    const answer = await send(agent, job, job.bodies[i % job.bodies.length]!);
    sockets.add(answer.socket);
    const ok = answer.status >= 200 && answer.status < 300;
    if (!ok) non2xx++;
    const problem = ok ? problemOf(answer.body, job.path, job.check) : null;
    if (problem !== null) {
      mismatches++;
      firstMismatch ??= `${problem}: ${answer.body.slice(0, 300)}`;
    }
    if (i < job.warmups) continue;
    times.push(answer.ms);
    bytes += answer.body.length;
    statusCodes[answer.status] = (statusCodes[answer.status] ?? 0) + 1;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  agent.destroy();
  if (sockets.size !== 1) firstMismatch ??= `used ${sockets.size} connections instead of one`;
  const sorted = [...times].sort((a, b) => a - b);
  printResult({
    reqPerSec: times.length / seconds,
    ok: times.length - non2xx,
    seconds,
    bytesPerResponse: bytes / times.length,
    latencyMs: { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: null, max: sorted[sorted.length - 1]! },
    problems: { non2xx, errors: sockets.size === 1 ? 0 : 1, timeouts: 0, mismatches },
    statusCodes,
    clientCpuPercent: (100 * (used.user + used.system)) / (seconds * 1e6),
    firstMismatch,
  });
}

await main(JSON.parse(process.argv[2]!) as SequentialJob);
