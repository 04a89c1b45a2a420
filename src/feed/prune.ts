// Retention of the change feed (spec §14.3): changes older than
// CHANGES_RETENTION_DAYS are deleted from the events table they share with the
// webhooks' outbox — except those a webhook delivery still waits on — and the
// highest seq deleted is kept, so a reader whose cursor lies below it is told to
// resynchronise instead of silently missing changes.
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { formatDatetime } from '../model/dates.ts';

export interface Pruned {
  /** Events deleted by this run. */
  readonly deleted: number;
  /** The highest seq ever pruned: `seq>N` with N below it answers 410. */
  readonly through: number;
}

const DAY_MS = 86_400_000;

/** Deletes the changes (and other events) older than `days` days before `now`, in one transaction. */
export async function pruneChanges(database: Database, days: number, now: Date): Promise<Pruned> {
  const cutoff = formatDatetime(new Date(now.getTime() - days * DAY_MS));
  return database.transaction(async (db) => {
    const old = sql`FROM events AS e WHERE e.created < ${cutoff} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS d
      WHERE d.event_seq = e.seq AND d.status IN ('pending', 'retrying'))`;
    const { rows } = await sql<{ top: number | string | null }>`SELECT MAX(e.seq) AS top ${old}`.execute(db);
    const top = rows[0]?.top === null || rows[0]?.top === undefined ? null : Number(rows[0].top);
    let deleted = 0;
    if (top !== null) {
      // Not above `top`: a delivery finishing meanwhile must not free an event past the seq recorded as pruned.
      const r = await sql`DELETE FROM events WHERE seq IN (SELECT e.seq ${old} AND e.seq <= ${top})`.execute(db);
      deleted = Number(r.numAffectedRows ?? 0);
      await sql`UPDATE changes_pruned SET through = ${top} WHERE id = 1 AND through < ${top}`.execute(db);
    }
    const { rows: [floor] } = await PRUNED.execute(db);
    return { deleted, through: Number(floor?.through ?? 0) };
  });
}

const PRUNED = sql<{ through: number | string }>`SELECT through FROM changes_pruned WHERE id = 1`;

/** The highest seq pruned so far (0: none). */
export async function prunedThrough(database: Database): Promise<number> {
  const [row] = await database.read<{ through: number | string }>(database.statements.get('changes|pruned', () => PRUNED), {});
  return Number(row?.through ?? 0);
}
