// The instances' heartbeat table (migration 0018): who is running, as of when.
import { sql } from 'kysely';
import type { Database } from './database.ts';

/** An instance that has not beaten for this long is taken for dead: the claims it holds may be taken over. */
export const INSTANCE_STALE_MS = 15_000;
/** Rows of instances silent this long are deleted (a dead process's row is no use to anyone after it). */
const FORGET_MS = 3_600_000;

/** Writes (or refreshes) the instance's row; forgets long-dead instances on the way. */
export async function beat(database: Database, id: string, nowMs: number): Promise<void> {
  await database.transaction(async (db) => {
    await sql`INSERT INTO instances (id, beat_at) VALUES (${id}, ${nowMs}) ON CONFLICT (id) DO UPDATE SET beat_at = ${nowMs}`.execute(db);
    await sql`DELETE FROM instances WHERE beat_at < ${nowMs - FORGET_MS}`.execute(db);
  });
}

/** Deletes the instance's row (it stops): what it still claims may be taken over at once. */
export async function retire(database: Database, id: string): Promise<void> {
  await sql`DELETE FROM instances WHERE id = ${id}`.execute(database.db);
}
