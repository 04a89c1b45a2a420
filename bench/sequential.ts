// The client of W6, W7, the CSV import and the stall workload's writes (pinned by
// measure.ts): one request at a time over one keep-alive mTLS connection, each timed
// from sending to the last byte of the answer and its status and body checked. Its
// bodies are given (W6 alternates two, so that every request really changes the rows)
// or made here, untimed, before each request: new assets (new-assets.ts), a batch of
// their own per request, as JSON or as CSV. Reads its job as JSON from argv[2];
// prints `MEASURING` after the warm-ups and `RESULT <json>` at the end.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { Socket } from 'node:net';
import { type Check, problemOf } from './checks.ts';
import { assetsCsv, assetsJson, newAssets, type NewAssetsSpec } from './new-assets.ts';
import { announceMeasuring, percentile, printResult } from './result.ts';

/** Request bodies: given ones in turn, or new assets, batch i for request i. */
export type Bodies =
  | { readonly kind: 'given'; readonly bodies: readonly string[] }
  | { readonly kind: 'assets'; readonly format: 'json' | 'csv'; readonly assets: NewAssetsSpec };

export interface SequentialJob {
  readonly origin: string;
  readonly method: 'POST' | 'PUT';
  readonly path: string;
  readonly bodies: Bodies;
  /** The status every answer must have; any 2xx when not given. */
  readonly status?: number;
  readonly warmups: number;
  readonly iterations: number;
  /** Requests go on after the iterations until this many seconds have been measured. */
  readonly minSeconds?: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly check: Check;
}

function bodyOf(b: Bodies, i: number): { readonly text: string; readonly type: string } {
  if (b.kind === 'given') return { text: b.bodies[i % b.bodies.length]!, type: 'application/json' };
  const assets = newAssets(b.assets, i);
  return b.format === 'json' ? { text: assetsJson(assets), type: 'application/json' } : { text: assetsCsv(assets), type: 'text/csv' };
}

interface Answer { readonly status: number; readonly body: string; readonly ms: number; readonly socket: Socket }

function send(agent: https.Agent, job: SequentialJob, body: { readonly text: string; readonly type: string }): Promise<Answer> {
  const url = new URL(job.origin);
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = https.request({
      agent, host: url.hostname, port: url.port, method: job.method, path: job.path, servername: 'localhost',
      headers: { 'content-type': body.type, 'content-length': Buffer.byteLength(body.text) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: Number(process.hrtime.bigint() - t0) / 1e6, socket: req.socket!,
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body.text);
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
  const more = (i: number) => i < job.warmups + job.iterations || (performance.now() - started) / 1000 < (job.minSeconds ?? 0);
  for (let i = 0; more(i); i++) {
    const body = bodyOf(job.bodies, i);
    if (i === job.warmups) {
      announceMeasuring();
      cpu = process.cpuUsage();
      started = performance.now();
    }
    const answer = await send(agent, job, body);
    sockets.add(answer.socket);
    const ok = job.status === undefined ? answer.status >= 200 && answer.status < 300 : answer.status === job.status;
    if (!ok) non2xx++;
    const problem = ok ? problemOf(answer.body, job.path, job.check) : null;
    if (!ok) firstMismatch ??= `status ${answer.status}: ${answer.body.slice(0, 300)}`;
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
