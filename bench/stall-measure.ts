// One part of the stall workload: the service started fresh on core 0, the probe
// (probe.ts) on core 1 from the moment the service answers, and beside it nothing
// (an idle server, for a while), the service's first background run (watched in its
// log: the reminder job's `job ran` line), or a worker — a write client on core 1 — from its
// first request to its last answer. The probe's samples due within that window give
// its p50, p99 and maximum.
import type { LoadResult } from './result.ts';
import { PROBE_RATE, TLS_FILES } from './config.ts';
import { type Loader, pinned, type ServerSpec, startServer } from './measure.ts';
import type { ProbeJob, ProbeResult, Sample } from './probe.ts';
import { type Child, procStats, startNode, stop } from './processes.ts';
import { percentile } from './result.ts';
import type { Check } from './checks.ts';

/** What the first background run did, from its log line. */
export interface ReminderCounts { readonly created: number; readonly delivered: number; readonly messages: number; readonly failed: readonly number[] }

export interface FirstRun {
  /** From 5 s after the service listened (src/jobs/schedule.ts) to its log line; null when it had not ended. */
  readonly seconds: number | null;
  readonly reminders: ReminderCounts | null;
}

export type Beside =
  | { readonly kind: 'idle'; readonly seconds: number }
  | { readonly kind: 'first run'; readonly timeoutSeconds: number; readonly expected: Omit<ReminderCounts, 'failed'> }
  | { readonly kind: 'worker'; readonly loader: Loader };

export interface WindowStats {
  readonly seconds: number; readonly probes: number; readonly p50: number; readonly p99: number; readonly max: number;
  /** When the slowest probe was due, in seconds from the window's start. */
  readonly maxAtSeconds: number;
}

export interface StallRow {
  readonly label: string;
  readonly window: WindowStats;
  readonly worker: LoadResult | null;
  readonly firstRun: FirstRun;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
  /** Wrong answers, a failed or unexpected background run, a probe that was not stopped: each fails the run. */
  readonly problems: readonly string[];
}

/** Calls `onLine` with each line of the child's stdout and when it arrived. */
function eachLine(child: Child, onLine: (line: string, at: number) => void): void {
  let rest = '';
  child.process.stdout!.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString()).split('\n');
    rest = parts.pop()!;
    const at = Date.now();
    for (const line of parts) onLine(line, at);
  });
}

/** A child's `MEASURING` and `RESULT` lines, with when they came, and its exit. */
function watch(child: Child) {
  let measuringAt = 0;
  let resultAt = 0;
  let result = '';
  let announce: (at: number) => void = () => {};
  const measuring = new Promise<number>((r) => { announce = r; });
  eachLine(child, (line, at) => {
    if (line === 'MEASURING' && measuringAt === 0) announce((measuringAt = at));
    else if (line.startsWith('RESULT ')) { resultAt = at; result = line.slice('RESULT '.length); }
  });
  const closed = new Promise<number | null>((r) => child.process.once('close', r));
  const failed = closed.then((code) => { throw new Error(`${child.process.spawnargs.join(' ').slice(0, 200)} exited (${code}) before it measured:\n${child.output()}`); });
  return {
    /** Resolves when MEASURING comes (rejects when the child ends first). */
    measuring: Promise.race([measuring, failed]),
    async result(): Promise<{ text: string; at: number }> {
      const code = await closed;
      if (code !== 0 || result === '') throw new Error(`exit ${code}:\n${child.output()}`);
      return { text: result, at: resultAt };
    },
  };
}

/** The service's log lines the stall workload reads (JSON at LOG_LEVEL=info). */
function watchLog(server: Child) {
  let run: { at: number; ms: number | null; reminders: ReminderCounts | null; error: string | null } | null = null;
  let over: () => void = () => {};
  const ended = new Promise<void>((r) => { over = r; });
  eachLine(server, (line) => {
    if (!line.startsWith('{')) return;
    let entry: { msg?: string; time?: number; job?: string; ms?: number; result?: ReminderCounts; err?: { message?: string } };
    try { entry = JSON.parse(line) as typeof entry; } catch { return; }
    // The reminder job's first run (src/jobs/schedule.ts logs each run with its summary and length).
    if (run === null && entry.job === 'reminders' && (entry.msg === 'job ran' || entry.msg === 'job failed')) {
      run = { at: entry.time ?? Date.now(), ms: entry.ms ?? null, reminders: entry.result ?? null,
        error: entry.msg === 'job failed' ? entry.err?.message ?? 'failed' : null };
      over();
    }
  });
  return { ended, get run() { return run; } };
}

export function windowStats(samples: readonly Sample[], from: number, to: number): WindowStats {
  const inside = samples.filter(([due]) => due >= from && due <= to);
  const sorted = inside.map(([, ms]) => ms).sort((a, b) => a - b);
  const slowest = inside.reduce<Sample | null>((m, s) => (m === null || s[1] > m[1] ? s : m), null);
  const start = inside[0]?.[0] ?? from;
  return {
    seconds: ((inside[inside.length - 1]?.[0] ?? start) - start) / 1000, probes: inside.length,
    p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] ?? NaN,
    maxAtSeconds: slowest === null ? NaN : (slowest[0] - start) / 1000,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ProbeTarget { readonly path: string; readonly check: Check }

export async function measureStall(label: string, server: ServerSpec, probe: ProbeTarget, beside: Beside): Promise<StallRow> {
  let log: ReturnType<typeof watchLog> | undefined;
  const { child, port } = await startServer(server, (c) => { log = watchLog(c); });
  if (!log) throw new Error('the server log is not watched');
  const problems: string[] = [];
  const children: Child[] = [];
  try {
    const job: ProbeJob = {
      origin: `https://127.0.0.1:${port}`, path: probe.path, rate: PROBE_RATE, certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey, check: probe.check,
      maxSeconds: beside.kind === 'first run' ? beside.timeoutSeconds + 60 : beside.kind === 'idle' ? beside.seconds + 60 : 3600,
    };
    const prober = startNode(pinned(), 1, ['--import', 'tsx', 'bench/probe.ts', JSON.stringify(job)]);
    children.push(prober);
    const probed = watch(prober);
    const probeStart = await probed.measuring;
    let from = probeStart;
    let to: number;
    let worker: LoadResult | null = null;
    if (beside.kind === 'idle') {
      await sleep(beside.seconds * 1000);
      to = Date.now();
    } else if (beside.kind === 'first run') {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((r) => { timer = setTimeout(() => r(true), beside.timeoutSeconds * 1000); });
      const timedOut = await Promise.race([log.ended.then(() => false), late]);
      clearTimeout(timer);
      if (timedOut) problems.push(`the first background run had not ended after ${beside.timeoutSeconds} s`);
      to = log.run?.at ?? Date.now();
    } else {
      const w = startNode(pinned(), 1, ['--import', 'tsx', beside.loader.script, JSON.stringify(beside.loader.job(port))]);
      children.push(w);
      const watched = watch(w);
      from = await watched.measuring;
      const { text, at } = await watched.result();
      worker = JSON.parse(text) as LoadResult;
      to = at;
      const p = worker.problems;
      if (p.non2xx + p.errors + p.timeouts + p.mismatches > 0) problems.push(`the writes: ${JSON.stringify(p)}, ${worker.firstMismatch ?? ''}`);
    }
    prober.process.kill('SIGUSR2');
    const result = JSON.parse((await probed.result()).text) as ProbeResult;
    const p = result.problems;
    if (p.non2xx + p.errors + p.mismatches > 0) problems.push(`the probe: ${JSON.stringify(p)}, ${result.firstMismatch ?? ''}`);
    if (result.ranOut) problems.push('the probe ran out of time before it was stopped');
    const run = log.run;
    if (run?.error) problems.push(`the background run failed: ${run.error}`);
    if (run?.reminders && run.reminders.failed.length > 0) problems.push(`the reminder run failed for companies ${run.reminders.failed.join(', ')}`);
    if (beside.kind === 'first run' && run?.reminders) {
      const { created, delivered, messages } = run.reminders;
      const e = beside.expected;
      if (created !== e.created || delivered !== e.delivered || messages !== e.messages) {
        problems.push(`the reminder run made ${created}/${delivered}/${messages} reminders/deliveries/messages, not ${e.created}/${e.delivered}/${e.messages}`);
      }
    }
    const stats = procStats(child.pid);
    return {
      label, window: windowStats(result.samples, from, to), worker, rssMiB: stats.rssMiB, peakRssMiB: stats.peakRssMiB, problems,
      firstRun: { seconds: run?.ms != null ? run.ms / 1000 : null, reminders: run?.reminders ?? null },
    };
  } finally {
    for (const c of children) await stop(c);
    await stop(child);
  }
}
