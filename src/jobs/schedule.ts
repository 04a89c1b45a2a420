// Background work of a running instance: the reminder run, the sweep of expired
// sessions, the change feed's retention and expired idempotency keys. Several instances may run them at
// once (all are safe so).
import type { FastifyBaseLogger } from 'fastify';
import { sweepExpiredSessions } from '../auth/sessions.ts';
import { sweepLoginThrottle } from '../auth/throttle.ts';
import type { Database } from '../db/database.ts';
import { pruneChanges } from '../feed/prune.ts';
import { type Clock, formatDatetime } from '../model/dates.ts';
import { pruneKeys } from '../db/idempotency.ts';
import { runReminders } from './reminders.ts';

export interface Jobs {
  /** No new run starts; resolves once a run under way has reached a safe point (between two of its slices). */
  stop(): Promise<void>;
}

export interface JobSettings {
  readonly reminderIntervalMs: number;
  readonly changesRetentionDays: number;
}

export function startJobs(database: Database, clock: Clock, settings: JobSettings, log: FastifyBaseLogger): Jobs {
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = async () => {
    if (running || stopped) return;
    running = run();
    await running;
    running = null;
  };
  const run = async () => {
    try {
      const onError = (companyId: number, err: unknown) => log.error({ err, companyId }, 'reminder run failed for a company');
      const run = await runReminders(database, clock, { onError, stopping: () => stopped });
      if (stopped) return;
      const swept = await sweepExpiredSessions(database, clock.now());
      const forgotten = await sweepLoginThrottle(database, clock.now());
      const pruned = await pruneChanges(database, settings.changesRetentionDays, clock.now());
      const keys = await pruneKeys(database, formatDatetime(clock.now()));
      log.info({ reminders: run, expiredSessions: swept, forgottenLoginFailures: forgotten, prunedChanges: pruned.deleted, expiredIdempotencyKeys: keys },
        'background jobs ran');
    } catch (err) {
      log.error({ err }, 'background jobs failed');
    }
  };
  const first = setTimeout(() => void tick(), 5_000);
  const every = setInterval(() => void tick(), settings.reminderIntervalMs);
  first.unref();
  every.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
