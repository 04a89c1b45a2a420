import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { prepareStore } from '../store.ts';
import { type Command, output } from './command.ts';

export const migrateCommand: Command = {
  words: ['migrate'],
  usage: 'migrate [--json]',
  summary: 'Applies the migrations the database lacks and exits (safe from several instances at once).',
  async run(args) {
    const config = loadConfig();
    const database = openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
    try {
      const applied = await prepareStore(database);
      output(args, applied.length ? `applied ${applied.join(', ')}` : 'the schema is up to date', { applied });
    } finally {
      await database.close();
    }
  },
};
