import { runReminders } from '../jobs/reminders.ts';
import { systemClock } from '../model/dates.ts';
import { type Command, output } from './command.ts';
import { withDatabase } from './database.ts';

export const remindersRun: Command = {
  words: ['reminders', 'run'],
  usage: 'reminders run [--json]',
  async run(args) {
    const run = await withDatabase((d) => runReminders(d, systemClock));
    output(args, `created ${run.created} reminders, delivered ${run.delivered} as ${run.messages} messages`, run);
  },
};
