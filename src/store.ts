// A store made ready to serve: its migrations, then the parts of its schema that are
// made from the resource definitions (the event triggers, events/triggers.ts).
import type { Config } from './config.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { redisReadPositions } from './db/redis-positions.ts';
import { installEventTriggers } from './events/triggers.ts';
import { createRegistry } from './resources/registry.ts';

/** Applies pending migrations and brings the event triggers up to date; the names of the migrations this call applied. */
export async function prepareStore(database: Database): Promise<string[]> {
  const applied = await migrate(database.db);
  await installEventTriggers(database, createRegistry());
  return applied;
}

/**
 * Opens the configured store and makes it ready (the server, and every CLI command that needs the store).
 * `serving`: with the read replica, when one is configured (the server's GET requests read it).
 */
export async function openMigrated(config: Config, serving = false, onError: (e: unknown) => void = () => {}): Promise<Database> {
  const r = serving ? config.readReplica : null;
  const replica = r ? {
    ...r, poolSize: config.dbPoolSize, positions: config.redisUrl ? await redisReadPositions(config.redisUrl, onError) : undefined,
  } : undefined;
  const database = openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize, replica });
  await prepareStore(database);
  return database;
}
