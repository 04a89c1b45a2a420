import { resolve } from 'node:path';
import { backupSqlite, pgDumpCommand } from '../admin/backup.ts';
import { loadConfig } from '../config.ts';
import { sqliteFile } from '../db/database.ts';
import { type Command, output, requiredString } from './command.ts';

export const backup: Command = {
  words: ['backup'],
  usage: 'backup --out FILE [--json]',
  summary: `Backs up the database, also while the service runs.
  SQLite: writes a consistent copy to FILE (SQLite's online backup API), checks it, and prints its size;
          to restore, stop the service and put the copy in place of DATA_DIR/asset-tracker.sqlite
          (removing any -wal and -shm files beside it).
  PostgreSQL: prints the pg_dump command that writes FILE (one consistent snapshot); restore with pg_restore.`,
  options: { out: { type: 'string' } },
  async run(args) {
    const out = resolve(requiredString(args, 'out', this.usage));
    const config = loadConfig();
    if (config.databaseUrl && /^postgres(ql)?:\/\//.test(config.databaseUrl)) {
      const { command, passwordOmitted } = pgDumpCommand(config.databaseUrl, out);
      const note = passwordOmitted ? '\n(the password is left out: pg_dump reads it from PGPASSWORD or ~/.pgpass)' : '';
      output(args, `PostgreSQL is backed up with pg_dump (a consistent snapshot, safe while serving):\n  ${command}${note}`,
        { engine: 'postgres', command, file: out });
      return;
    }
    const written = await backupSqlite(sqliteFile({ url: config.databaseUrl, dataDir: config.dataDir }), out);
    output(args, `wrote ${written.file} (${written.bytes} bytes, integrity checked)`, { engine: 'sqlite', ...written });
  },
};
