import { loadConfig } from '../config.ts';
import type { Database } from '../db/database.ts';
import { openMigrated } from '../store.ts';

/** Opens the configured database (migrated), runs `fn`, closes it. */
export async function withDatabase<T>(fn: (d: Database) => Promise<T>): Promise<T> {
  const database = await openMigrated(loadConfig());
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}
