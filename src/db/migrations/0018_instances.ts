// Running instances and their heartbeat: each serving process writes its row every
// few seconds (`beat_at`, Unix milliseconds of its own clock) and deletes it when it
// stops. An Idempotency-Key claim names the instance that runs its request, so a
// claim whose instance stopped beating (the process died) can be taken over within
// seconds instead of when its lease runs out.
import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialects.ts';
import { createIndex, createTable } from './0001_initial.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'instances', [['id', 'text', { notNull: true, unique: true }], ['beat_at', 'int', { notNull: true }]]);
  await createIndex(db, 'instances', ['beat_at']);
  // Compared with instances.id, so of its collation on PostgreSQL.
  const collation = dialectOf(db).kind === 'postgres' ? sql` COLLATE "C"` : sql``;
  await sql`ALTER TABLE idempotency_keys ADD COLUMN instance text${collation}`.execute(db);
}
