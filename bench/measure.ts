// One measured workload: a server on core 0 (or none) and a load generator on core 1
// (or, without a server, on core 0), the server's CPU and memory from /proc, and what
// the rest of the machine used meanwhile.
import type { LoadResult } from './result.ts';
import { type Child, freePort, machineBusySeconds, pinningAvailable, procStats, startNode, stop, waitHealthy } from './processes.ts';
import { TLS_FILES } from './config.ts';

export interface Row {
  readonly label: string;
  readonly load: LoadResult;
  /** CPU of the server (or, without one, of the process doing the work); 100 = one core. */
  readonly serverCpuPercent: number;
  /** CPU used during the measured run by anything but the server and the load generator (other jobs on the machine). */
  readonly otherCpuPercent: number;
  /** The server's resident memory after the run, and its peak; null without a server. */
  readonly rssMiB: number | null;
  readonly peakRssMiB: number | null;
}

export interface ServerSpec {
  /** node's arguments, e.g. ['dist/cli/main.js', 'serve']. */
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/** A load generator's script and its job (passed as JSON in argv[2]). */
export interface Loader {
  readonly script: string;
  readonly job: (port: number) => object;
}

let pinning: boolean | undefined;
/** Whether processes are pinned to cores (checked, and any warning printed, once). */
export const pinned = (): boolean => (pinning ??= pinningAvailable());

/** Starts the server on core 0 and waits until it answers; `started` sees the child before its first output. */
export async function startServer(server: ServerSpec, started: (child: Child) => void = () => {}): Promise<{ child: Child; port: number }> {
  const port = await freePort();
  const child = startNode(pinned(), 0, server.args, {
    ...server.env, PORT: String(port), TLS_CERT_FILE: TLS_FILES.serverCert, TLS_KEY_FILE: TLS_FILES.serverKey,
  });
  started(child);
  try {
    await waitHealthy(child, port);
  } catch (error) {
    await stop(child);
    throw error;
  }
  return { child, port };
}

/** Runs a loader to its end; `onMeasuring` is called when it announces its measured part. */
async function runLoader(core: number, script: string, job: object, onMeasuring: () => void): Promise<LoadResult> {
  const child: Child = startNode(pinned(), core, ['--import', 'tsx', script, JSON.stringify(job)]);
  try {
    let announced = false;
    child.process.stdout!.on('data', () => {
      if (announced || !child.output().includes('MEASURING\n')) return;
      announced = true;
      onMeasuring();
    });
    const code = await new Promise<number | null>((r) => child.process.once('close', r));
    const line = /^RESULT (.*)$/m.exec(child.output());
    if (code !== 0 || !line) throw new Error(`${script} failed (exit ${code}):\n${child.output()}`);
    return JSON.parse(line[1]!) as LoadResult;
  } finally {
    await stop(child);
  }
}

const otherCpu = (busySeconds: number, serverCpuSeconds: number, load: LoadResult) =>
  Math.max(0, (100 * (busySeconds - serverCpuSeconds - (load.clientCpuPercent / 100) * load.seconds)) / load.seconds);

/** Starts the server on core 0, loads it from core 1 as soon as it answers, and returns the measured run. */
export async function measureServer(label: string, server: ServerSpec, loader: Loader): Promise<Row> {
  const { child, port } = await startServer(server);
  try {
    let cpuAtStart = 0;
    let busyAtStart = 0;
    const load = await runLoader(1, loader.script, loader.job(port), () => {
      cpuAtStart = procStats(child.pid).cpuSeconds;
      busyAtStart = machineBusySeconds();
    });
    const after = procStats(child.pid);
    const busy = machineBusySeconds() - busyAtStart;
    const serverCpu = after.cpuSeconds - cpuAtStart;
    return {
      label, load, serverCpuPercent: (100 * serverCpu) / load.seconds, otherCpuPercent: otherCpu(busy, serverCpu, load),
      rssMiB: after.rssMiB, peakRssMiB: after.peakRssMiB,
    };
  } finally {
    await stop(child);
  }
}

/** Runs a loader that does the work itself (no server) on the server's core. */
export async function measureDirect(label: string, script: string, job: object): Promise<Row> {
  let busyAtStart = 0;
  const load = await runLoader(0, script, job, () => { busyAtStart = machineBusySeconds(); });
  const busy = machineBusySeconds() - busyAtStart;
  return { label, load, serverCpuPercent: load.clientCpuPercent, otherCpuPercent: otherCpu(busy, 0, load), rssMiB: null, peakRssMiB: null };
}
