// An index of every asset's id, company and next check date, in id order: a list
// page walked in id order (src/engine/list.ts) reads it instead of the table when its
// filter tests only `next_check`, so each record it passes over costs a few bytes of
// index instead of the whole row. Page 101 of the assets due before a date (3,000
// matches skipped, ~6,300 assets walked) read its ids in 378 instead of 601 µs on
// SQLite (100k assets, better-sqlite3, prepared).
import type { Kysely } from 'kysely';
import { createIndex } from './0001_initial.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await createIndex(db, 'assets', ['id', 'company_id', 'next_check']);
}
