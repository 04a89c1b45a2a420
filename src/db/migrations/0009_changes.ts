// The change feed reads the events the triggers write (0008): the
// `changes` view shows the created, updated and deleted records among them, with
// `seq` as the row id the engine pages by. `changes_pruned` keeps the highest seq
// ever pruned, so a reader behind it is told to resynchronise (410).
import { type Kysely, sql } from 'kysely';
import { createIndex, createTable } from './0001_initial.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE VIEW changes AS
    SELECT seq AS id, seq, endpoint, record_id, op, created AS changed, company_id, scope_id, data
    FROM events WHERE op IN ('created', 'updated', 'deleted')`.execute(db);
  // A scoped read of the feed walks one company's events in seq order.
  await createIndex(db, 'events', ['scope_id', 'seq']);
  await createTable(db, 'changes_pruned', [['id', 'int', { notNull: true }], ['through', 'int', { notNull: true }]], [['id']]);
  await sql`INSERT INTO changes_pruned (id, through) VALUES (1, 0)`.execute(db);
}
