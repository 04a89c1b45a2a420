// Where each caller's last write ended in the primary's WAL (a byte position),
// so that any instance can tell whether a read replica has replayed it before
// serving that caller's reads from it. Unlogged (no WAL of its own): a position
// matters for seconds; a crash of the primary empties the table, which at worst lets a
// read in the moments after the restart reach a replica still catching up. SQLite has
// no replicas.
import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialects.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db).kind !== 'postgres') return;
  await sql`CREATE UNLOGGED TABLE read_positions (principal text COLLATE "C" PRIMARY KEY, lsn bigint NOT NULL,
    updated timestamptz NOT NULL DEFAULT now())`.execute(db);
}
