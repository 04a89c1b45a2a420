// Parts of the schema made from the code's definitions rather than by a migration —
// the event triggers (events/triggers.ts) — are made after the migrations and again
// whenever their SQL changes: this table keeps the digest of what is installed.
import type { Kysely } from 'kysely';
import { createTable } from './0001_initial.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'schema_parts', [['part', 'text', { notNull: true }], ['digest', 'text', { notNull: true }]], [['part']]);
}
