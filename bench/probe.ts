// The stall workload's probe (pinned by stall-measure.ts to the load generator's
// core): GETs at a fixed rate, evenly spaced, over one keep-alive mTLS connection,
// each timed from the moment it was due — a request that has to wait behind a slow
// one counts that wait, as a user's would — and every answer checked. It opens its
// connection with one untimed request, prints `MEASURING`, and probes until SIGUSR2
// (or `maxSeconds`); then prints `RESULT <json>` with every sample (its due time on
// the wall clock, so that the parent can cut the samples to the window it watched).
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { type Check, problemOf } from './checks.ts';
import { announceMeasuring } from './result.ts';

export interface ProbeJob {
  readonly origin: string;
  readonly path: string;
  /** Requests per second. */
  readonly rate: number;
  readonly maxSeconds: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly check: Check;
}

/** [due time (ms since the epoch), latency from then to the answer's last byte (ms)]. */
export type Sample = readonly [number, number];

export interface ProbeResult {
  readonly samples: readonly Sample[];
  readonly problems: { readonly non2xx: number; readonly errors: number; readonly mismatches: number };
  readonly firstMismatch: string | null;
  /** The probe stopped at maxSeconds instead of being told to. */
  readonly ranOut: boolean;
  readonly clientCpuPercent: number;
}

interface Outcome { readonly status: number; readonly body: string; readonly error: string | null }

const epochNow = () => performance.timeOrigin + performance.now();

async function main(job: ProbeJob): Promise<void> {
  const url = new URL(job.origin);
  const agent = new https.Agent({
    keepAlive: true, maxSockets: 1, cert: readFileSync(job.certFile), key: readFileSync(job.keyFile), rejectUnauthorized: false, minVersion: 'TLSv1.2',
  });
  const get = () => new Promise<Outcome>((resolve) => {
    const req = https.get({ agent, host: url.hostname, port: url.port, path: job.path, servername: 'localhost' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), error: null }));
      res.on('error', (e) => resolve({ status: 0, body: '', error: e.message }));
    });
    req.on('error', (e) => resolve({ status: 0, body: '', error: e.message }));
  });

  const samples: Sample[] = [];
  const problems = { non2xx: 0, errors: 0, mismatches: 0 };
  let firstMismatch: string | null = null;
  const check = (o: Outcome) => {
    if (o.error !== null) problems.errors++;
    else if (o.status !== 200) problems.non2xx++;
    const problem = o.error ?? (o.status !== 200 ? `status ${o.status}` : problemOf(o.body, job.path, job.check));
    if (problem === null) return;
    if (o.error === null && o.status === 200) problems.mismatches++;
    firstMismatch ??= `${problem}: ${o.body.slice(0, 300)}`;
  };

  check(await get());
  let stopping = false;
  let wake: (() => void) | null = null;
  process.on('SIGUSR2', () => { stopping = true; wake?.(); });
  announceMeasuring();
  const cpu = process.cpuUsage();
  const interval = 1000 / job.rate;
  const start = epochNow();
  const pending = new Set<Promise<void>>();
  for (let i = 0; !stopping; i++) {
    const due = start + i * interval;
    if (due - start >= job.maxSeconds * 1000) break;
    const wait = due - epochNow();
    if (wait > 0) await new Promise<void>((r) => { wake = r; setTimeout(r, wait); });
    if (stopping) break;
    const done = get().then((o) => {
      samples.push([due, epochNow() - due]);
      check(o);
    });
    pending.add(done);
    void done.then(() => pending.delete(done));
  }
  await Promise.all(pending);
  const used = process.cpuUsage(cpu);
  agent.destroy();
  const seconds = (epochNow() - start) / 1000;
  const result: ProbeResult = {
    samples: samples.sort((a, b) => a[0] - b[0]), problems, firstMismatch, ranOut: !stopping,
    clientCpuPercent: (100 * (used.user + used.system)) / (seconds * 1e6),
  };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

await main(JSON.parse(process.argv[2]!) as ProbeJob);
