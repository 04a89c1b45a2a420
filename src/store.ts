// A store made ready to serve: its migrations, then the parts of its schema that are
// made from the resource definitions (the event triggers, events/triggers.ts).
import type { Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { installEventTriggers } from './events/triggers.ts';
import { createRegistry } from './resources/registry.ts';

/** Applies pending migrations and brings the event triggers up to date; the names of the migrations this call applied. */
export async function prepareStore(database: Database): Promise<string[]> {
  const applied = await migrate(database.db);
  await installEventTriggers(database, createRegistry());
  return applied;
}
