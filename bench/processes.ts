// Child processes of the benchmark: CPU pinning (taskset), readiness, RSS and CPU time from /proc.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { availableParallelism } from 'node:os';

/** Whether `taskset -c <core>` can be used; prints why not when it cannot. */
export function pinningAvailable(): boolean {
  if (spawnSync('taskset', ['-V']).error) {
    process.stdout.write('WARNING: taskset not found; server and load generator are NOT pinned to separate cores\n');
    return false;
  }
  if (availableParallelism() < 2) {
    process.stdout.write('WARNING: fewer than 2 cores; server and load generator are NOT pinned and share one core\n');
    return false;
  }
  return true;
}

export interface Child { readonly process: ChildProcess; readonly pid: number; output(): string }

/** Starts `node <args>` on `core` (taskset execs node, so the pid is node's own). */
export function startNode(pin: boolean, core: number, args: readonly string[], env: NodeJS.ProcessEnv = {}): Child {
  const [cmd, argv] = pin ? ['taskset', ['-c', String(core), process.execPath, ...args]] : [process.execPath, [...args]];
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (c: Buffer) => { text += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { text += c.toString(); });
  return { process: child, pid: child.pid!, output: () => text };
}

export async function stop(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.process.once('exit', () => r()));
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });
}

/** Waits until GET /healthz answers 200; fails with the child's output if it exits or takes over 20 s. */
export async function waitHealthy(child: Child, port: number): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
    if (child.process.exitCode !== null) throw new Error(`server exited (${child.process.exitCode}):\n${child.output()}`);
    if (await healthy(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not become healthy within 20 s:\n${child.output()}`);
}

const TICKS_PER_SECOND = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { return 100; }
})();

/** Resident memory (now and peak, MiB) and CPU seconds used so far, from /proc. */
export function procStats(pid: number): { rssMiB: number; peakRssMiB: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // Fields after the command name (which may hold spaces) in /proc/<pid>/stat: utime is the 14th, stime the 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { rssMiB: kb('VmRSS') / 1024, peakRssMiB: kb('VmHWM') / 1024, cpuSeconds: ticks / TICKS_PER_SECOND };
}

/** CPU seconds the whole machine has been busy (all cores, everything but idle and iowait), from /proc/stat. */
export function machineBusySeconds(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / TICKS_PER_SECOND;
}
