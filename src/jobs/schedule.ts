// Background work of a running instance: the reminder run and the sweep of
// expired sessions. Several instances may run them at once (both are safe so).
import type { FastifyBaseLogger } from 'fastify';
import { sweepExpiredSessions } from '../auth/sessions.ts';
import type { Database } from '../db/database.ts';
import type { Clock } from '../model/dates.ts';
import { runReminders } from './reminders.ts';

export interface Jobs { stop(): void }

export function startJobs(database: Database, clock: Clock, reminderIntervalMs: number, log: FastifyBaseLogger): Jobs {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const run = await runReminders(database, clock, (companyId, err) => log.error({ err, companyId }, 'reminder run failed for a company'));
      const swept = await sweepExpiredSessions(database.db, clock.now());
      log.info({ reminders: run, expiredSessions: swept }, 'background jobs ran');
    } catch (err) {
      log.error({ err }, 'background jobs failed');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(() => void tick(), 5_000);
  const every = setInterval(() => void tick(), reminderIntervalMs);
  first.unref();
  every.unref();
  return { stop: () => { clearTimeout(first); clearInterval(every); } };
}
