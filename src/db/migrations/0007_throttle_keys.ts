// Login throttle rows are keyed by the username's SHA-256 (fixed size, whatever a
// sprayer types) and pruned once older than the window, by their retry time.
// The rows are short-lived state: those kept under the old key are dropped.
import { type Kysely, sql } from 'kysely';
import { createIndex } from './0001_initial.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM login_throttle`.execute(db);
  await createIndex(db, 'login_throttle', ['retry_at']);
}
