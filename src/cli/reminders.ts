import { runReminders } from '../jobs/reminders.ts';
import { systemClock } from '../model/dates.ts';
import { type Command, output } from './command.ts';
import { withDatabase } from './database.ts';

export const remindersRun: Command = {
  words: ['reminders', 'run'],
  usage: 'reminders run [--json]',
  async run(args) {
    const errors: string[] = [];
    const run = await withDatabase((d) => runReminders(d, systemClock, (id, e) => errors.push(`company ${id}: ${(e as Error).message}`)));
    output(args, `created ${run.created} reminders, delivered ${run.delivered} as ${run.messages} messages`, run);
    if (errors.length > 0) {
      process.stderr.write(`the run failed for ${errors.join('; ')}\n`);
      process.exitCode = 1;
    }
  },
};
