import { join, resolve } from 'node:path';
import { backupStore, restoreStore, type Store } from '../admin/backup.ts';
import { type Config, loadConfig } from '../config.ts';
import { sqliteFile } from '../db/database.ts';
import { type Command, output, requiredString } from './command.ts';

/** The store the settings name: the database and the directory of the files' content. */
function storeOf(config: Config): Store {
  const filesDir = join(config.dataDir, 'files');
  return config.databaseUrl && /^postgres(ql)?:\/\//.test(config.databaseUrl)
    ? { engine: 'postgres', url: config.databaseUrl, filesDir }
    : { engine: 'sqlite', file: sqliteFile({ url: config.databaseUrl, dataDir: config.dataDir }), filesDir };
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

export const backup: Command = {
  words: ['backup'],
  usage: 'backup --out DIR [--json]',
  summary: `Backs up the whole store into the new directory DIR, also while the service runs: the database as one
  committed state (SQLite's online backup API; PostgreSQL: pg_dump in a snapshot) and the uploaded files' content
  that state refers to, each checked against its SHA-256, with a manifest. \`restore --from DIR\` brings it back.`,
  options: { out: { type: 'string' } },
  async run(args) {
    const out = resolve(requiredString(args, 'out', this.usage));
    const done = await backupStore(storeOf(loadConfig()), out);
    output(args, `wrote ${done.dir}: the ${done.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'} database (${mib(done.databaseBytes)}) and `
      + `${done.files} files' content (${mib(done.fileBytes)}), checked`, done);
  },
};

export const restore: Command = {
  words: ['restore'],
  usage: 'restore --from DIR [--json]',
  summary: `Restores a backup made by \`backup\` into an empty store of the same engine: a new DATA_DIR (SQLite) or an
  empty PostgreSQL database (DATABASE_URL) and DATA_DIR/files. Every file's content is checked first; nothing is
  overwritten. Start the service (or run \`migrate\`) afterwards: an older backup's schema is brought up to date.`,
  options: { from: { type: 'string' } },
  async run(args) {
    const from = resolve(requiredString(args, 'from', this.usage));
    const done = await restoreStore(from, storeOf(loadConfig()));
    output(args, `restored ${from}: the ${done.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'} database and ${done.files} files' content `
      + `(${mib(done.fileBytes)})`, { from, ...done });
  },
};
