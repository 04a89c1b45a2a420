import { loadConfig } from '../config.ts';
import { runReminders } from '../jobs/reminders.ts';
import { systemClock } from '../model/dates.ts';
import { type Command, output } from './command.ts';
import { withDatabase } from './database.ts';

export const remindersRun: Command = {
  words: ['reminders', 'run'],
  usage: 'reminders run [--json]',
  summary: 'One reminder run, as every running instance does each REMINDER_INTERVAL: creates the reminders\n'
    + 'that came due in each company\'s window and time zone, and delivers the active ones as messages (with e-mail\n'
    + 'on, it queues each user\'s digest and the weekly lists that are due).',
  async run(args) {
    const errors: string[] = [];
    const mail = loadConfig().mail !== null;
    const run = await withDatabase((d) => runReminders(d, systemClock, { mail, onError: (id, e) => errors.push(`company ${id}: ${(e as Error).message}`) }));
    const queued = mail ? `; queued ${run.digests ?? 0} e-mail digests and ${run.weekly ?? 0} weekly lists (a running instance sends them)` : '';
    output(args, `created ${run.created} reminders, delivered ${run.delivered} as ${run.messages} messages${queued}`, run);
    if (errors.length > 0) {
      process.stderr.write(`the run failed for ${errors.join('; ')}\n`);
      process.exitCode = 1;
    }
  },
};
