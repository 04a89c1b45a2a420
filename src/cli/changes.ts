// asset-tracker changes prune.
import { loadConfig } from '../config.ts';
import { pruneChanges } from '../feed/prune.ts';
import { type Command, output, positiveInt } from './command.ts';
import { withDatabase } from './database.ts';

export const changesPrune: Command = {
  words: ['changes', 'prune'],
  usage: 'changes prune [--days N] [--json]',
  summary: 'Deletes the changes older than N days (default CHANGES_RETENTION_DAYS, 30) from the change feed, as every\n'
    + 'running instance does each REMINDER_INTERVAL; events a webhook delivery still waits on stay. A reader whose\n'
    + 'cursor lies below the highest pruned seq is answered 410 cursor_expired.',
  options: { days: { type: 'string' } },
  async run(args) {
    const days = args.values.days === undefined ? loadConfig().changesRetentionDays : positiveInt(args.values.days, '--days');
    const r = await withDatabase((d) => pruneChanges(d, days, new Date()));
    output(args, `pruned ${r.deleted} events older than ${days} days; changes up to seq ${r.through} are gone`, { days, ...r });
  },
};
