// Forward-only migrations, applied at start-up and by `asset-tracker migrate`.
// Kysely's migrator holds a lock while it migrates (an advisory lock on
// PostgreSQL, the single writer on SQLite), so several instances may start at
// once; a loser of the race to create the bookkeeping tables simply retries.
import { type Kysely, type Migration, Migrator } from 'kysely';
import * as initial from './migrations/0001_initial.ts';
import * as sessions from './migrations/0002_sessions.ts';
import * as reminderRuns from './migrations/0003_reminder_runs.ts';
import * as companyClosure from './migrations/0004_company_closure.ts';
import * as clientNotices from './migrations/0005_client_notices.ts';

const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_sessions': sessions,
  '0003_reminder_runs': reminderRuns,
  '0004_company_closure': companyClosure,
  '0005_client_notices': clientNotices,
};

export async function migrate<T>(db: Kysely<T>): Promise<string[]> {
  // Migrations see the schema untyped: they describe it rather than use it.
  const migrator = new Migrator({ db: db as unknown as Kysely<unknown>, provider: { getMigrations: async () => migrations } });
  for (let attempt = 1; ; attempt++) {
    const { error, results = [] } = await migrator.migrateToLatest();
    if (!error) return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (attempt >= 5) throw error;
    await new Promise((r) => setTimeout(r, 50 * attempt));
  }
}
