// Event ids ordered by time (events/triggers.ts): the event triggers are made again
// with the ids' new form, and SQLite's row triggers build an event from the row the
// trigger has instead of reading it again. Events already written keep their ids.
import { type Kysely, PostgresAdapter } from 'kysely';
import { installEventTriggers } from '../../events/triggers.ts';
import { createRegistry } from '../../resources/registry.ts';
import { postgresHooks } from '../postgres.ts';
import { sqliteHooks } from '../sqlite.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await installEventTriggers(db, postgres ? postgresHooks : sqliteHooks, createRegistry());
}
