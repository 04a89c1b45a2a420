// Every background job of a running instance, in one table that the scheduler
// (jobs/schedule.ts), the CLI (`asset-tracker jobs`) and the metrics read: what it
// does, how often, and how several instances share its work. Each works in slices
// (model/slices.ts) and yields between them; none runs unbounded on the event loop.
import { sweepExpiredSessions } from '../auth/sessions.ts';
import { sweepLoginThrottle } from '../auth/throttle.ts';
import type { Database } from '../db/database.ts';
import { pruneKeys } from '../db/idempotency.ts';
import { pruneChanges } from '../feed/prune.ts';
import { type Clock, formatDatetime } from '../model/dates.ts';
import { Dispatcher } from '../webhooks/dispatcher.ts';
import { MailSender } from '../mail/outbox.ts';
import type { MailSettings } from '../mail/settings.ts';
import { runReminders } from './reminders.ts';

export interface JobSettings {
  readonly reminderIntervalMs: number;
  readonly changesRetentionDays: number;
  readonly webhooks: { readonly allowPrivate: boolean; readonly timeoutMs: number };
  /** E-mail; null when it is off. */
  readonly mail: MailSettings | null;
}

export interface JobDeps {
  /** The store background work uses (Database.forBackground()). */
  readonly database: Database;
  readonly clock: Clock;
  readonly settings: JobSettings;
  readonly log?: { warn(o: object, msg: string): void; info(o: object, msg: string): void; error(o: object, msg: string): void };
}

export interface Job {
  readonly name: string;
  readonly does: string;
  /** How several instances running it at once share its work without doing it twice. */
  readonly shared: string;
  /** The first run this long after start-up, then one this long after the last ended. */
  readonly firstMs: number;
  everyMs(settings: JobSettings): number;
  /** The job's runner over a store (the dispatcher keeps its leases' owner across runs). */
  start(deps: JobDeps): JobRunner;
}

export interface JobRunner {
  /** One run; asks `stopping` between slices and ends there when told to. A summary for the log. */
  run(stopping: () => boolean): Promise<Readonly<Record<string, unknown>>>;
  /** Ends what the job holds once its runs have stopped. */
  stop?(): Promise<void>;
}

/** The webhook dispatcher looks for new events this often. */
const DISPATCH_EVERY_MS = 250;
/** The mail job looks for due e-mail this often. */
const MAIL_EVERY_MS = 2000;
/** The jobs of the reminder interval start a little after the instance, once it serves. */
const FIRST_RUN_MS = 5_000;
const hourly = (s: JobSettings) => s.reminderIntervalMs;

export const JOBS: readonly Job[] = [
  {
    name: 'reminders', firstMs: FIRST_RUN_MS, everyMs: hourly,
    does: 'makes the reminders of assets that came due and delivers the active ones as messages (and, with e-mail on, queues digests and weekly lists)',
    shared: 'one reminder per asset and due date (a unique index); each delivery claimed by a conditional update; a weekly list once per company and week (a unique index)',
    start: ({ database, clock, settings, log }) => ({
      run: async (stopping) => ({
        ...await runReminders(database, clock, { stopping, mail: settings.mail !== null,
          onError: (companyId, err) => log?.error({ err, companyId }, 'reminder run failed for a company') }),
      }),
    }),
  },
  {
    name: 'sessions', firstMs: FIRST_RUN_MS, everyMs: hourly, does: 'deletes expired sessions', shared: 'deleting twice deletes once',
    start: ({ database, clock }) => ({ run: async () => ({ deleted: await sweepExpiredSessions(database, clock.now()) }) }),
  },
  {
    name: 'login-throttle', firstMs: FIRST_RUN_MS, everyMs: hourly, does: 'forgets usernames whose last failed login is over an hour old',
    shared: 'deleting twice deletes once',
    start: ({ database, clock }) => ({ run: async () => ({ deleted: await sweepLoginThrottle(database, clock.now()) }) }),
  },
  {
    name: 'changes', firstMs: FIRST_RUN_MS, everyMs: hourly, does: `prunes the change feed's events older than CHANGES_RETENTION_DAYS`,
    shared: 'deleting twice deletes once; the highest seq pruned only grows',
    start: ({ database, clock, settings }) => ({ run: async () => ({ ...await pruneChanges(database, settings.changesRetentionDays, clock.now()) }) }),
  },
  {
    name: 'idempotency-keys', firstMs: FIRST_RUN_MS, everyMs: hourly, does: 'forgets Idempotency-Keys older than 24 hours',
    shared: 'deleting twice deletes once',
    start: ({ database, clock }) => ({ run: async () => ({ deleted: await pruneKeys(database, formatDatetime(clock.now())) }) }),
  },
  {
    name: 'webhooks', firstMs: DISPATCH_EVERY_MS, everyMs: () => DISPATCH_EVERY_MS,
    does: 'fans new events out to the webhooks that hear them and makes the due delivery attempts',
    shared: 'a webhook fans out under a row lock others pass over (SKIP LOCKED); its deliveries under a lease',
    start: ({ database, clock, settings, log }) => {
      const dispatcher = new Dispatcher(database, { ...settings.webhooks, clock, log });
      return { run: async (stopping) => ({ ...await dispatcher.pass(stopping) }), stop: () => dispatcher.stop() };
    },
  },
  {
    name: 'mail', firstMs: MAIL_EVERY_MS, everyMs: () => MAIL_EVERY_MS,
    does: 'sends the due e-mail of the outbox (digests, weekly lists); nothing while e-mail is off',
    shared: 'each e-mail sent under a lease on its outbox row (the outboxes\' shared mechanism, as webhook deliveries)',
    start: ({ database, clock, settings, log }) => {
      const mail = settings.mail;
      if (!mail) return { run: async () => ({ attempted: 0, delivered: 0 }) };
      const sender = new MailSender(database, mail, { clock, log });
      return { run: async (stopping) => ({ ...await sender.pass(stopping) }), stop: async () => { sender.close(); } };
    },
  },
];
