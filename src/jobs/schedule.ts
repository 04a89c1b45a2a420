// The scheduler of a running instance's background jobs (jobs/table.ts): each job
// runs first `firstMs` after start-up, then `everyMs` after its last run ended (never
// two runs of a job at once), each run logged and measured. Several instances may run
// them at once (the table says how each shares its work).
import type { FastifyBaseLogger } from 'fastify';
import { observeJobRun } from '../metrics.ts';
import { JOBS, type Job, type JobDeps, type JobRunner } from './table.ts';

export interface Jobs {
  /** No new run starts; resolves once the runs under way have reached a safe point (between two of their slices). */
  stop(): Promise<void>;
}

export function startJobs(deps: JobDeps, log: FastifyBaseLogger, jobs: readonly Job[] = JOBS): Jobs {
  let stopped = false;
  const stopping = () => stopped;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  const runners = jobs.map((job) => ({ job, runner: job.start(deps), everyMs: job.everyMs(deps.settings) }));
  const later = (r: (typeof runners)[number], ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      const run = runOnce(r.job.name, r.runner, r.everyMs, stopping, log).finally(() => {
        running.delete(run);
        if (!stopped) later(r, r.everyMs);
      });
      running.add(run);
    }, ms);
    timer.unref();
    timers.add(timer);
  };
  for (const r of runners) later(r, r.job.firstMs);
  return {
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await Promise.all(running);
      for (const r of runners) await r.runner.stop?.();
    },
  };
}

/** One run of a job: its summary logged (but a frequent job's idle runs) and measured; a failure logged. */
async function runOnce(name: string, runner: JobRunner, everyMs: number, stopping: () => boolean, log: FastifyBaseLogger): Promise<void> {
  const started = Date.now();
  try {
    const result = await runner.run(stopping);
    const ms = Date.now() - started;
    observeJobRun(name, 'ok', ms);
    const idle = Object.values(result).every((v) => v === 0 || (Array.isArray(v) && v.length === 0));
    if (!idle || everyMs >= 60_000) log.info({ job: name, ms, result }, 'job ran');
  } catch (err) {
    observeJobRun(name, 'failed', Date.now() - started);
    log.error({ err, job: name }, 'job failed');
  }
}
