// Expired rows (sessions, login throttle entries, idempotency keys) are deleted by
// the background jobs a slice at a time (model/slices.ts): each slice one short
// statement over a bounded number of rows picked by their physical row key, so a
// sweep after a busy day never holds the database for long.
import { sql } from 'kysely';
import type { Database } from './database.ts';
import type { Sql } from '../model/dialect.ts';
import { DEFAULT_SLICES, type SliceLimits, Slices } from '../model/slices.ts';

/** Deletes the rows of `table` that `where` selects; returns how many. */
export async function deleteInSlices(database: Database, table: string, where: Sql, limits: SliceLimits = DEFAULT_SLICES): Promise<number> {
  const { hooks } = database;
  const slices = new Slices(limits);
  let deleted = 0;
  for (;;) {
    const n = await slices.run(async (size) => {
      const some = sql`SELECT ${hooks.rowKey} FROM ${sql.table(table)} WHERE ${where} LIMIT ${size}`;
      const r = await sql`DELETE FROM ${sql.table(table)} WHERE ${hooks.inSubquery(hooks.rowKey, some)}`.execute(database.db);
      return Number(r.numAffectedRows ?? 0);
    });
    deleted += n;
    if (n === 0) return deleted;
  }
}
