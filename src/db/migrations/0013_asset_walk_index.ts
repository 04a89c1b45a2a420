// SQLite: an index of every asset's id, company and next check date, in id order. A
// list page walked in id order (src/engine/list.ts) reads it instead of the table
// when its filter tests only `next_check`, so each record it passes over costs a few
// bytes of index instead of the whole row: page 101 of the assets due before a date
// (3,000 matches skipped, ~6,300 assets walked) read its ids in 378 instead of
// 601 µs (100k assets, better-sqlite3, prepared). PostgreSQL gets none: it preferred
// an index-only scan of it to its primary key for the first page, which made W2's
// page slower there (bare W2 1,048 → 630 req/s), and walks its primary key well.
import type { Kysely } from 'kysely';
import { forEngine } from '../dialects.ts';
import { createIndex } from './0001_initial.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await forEngine(db, { sqlite: () => createIndex(db, 'assets', ['id', 'company_id', 'next_check']), postgres: async () => {} })();
}
