// Retention of the change feed: changes older than
// CHANGES_RETENTION_DAYS are deleted from the events table they share with the
// webhooks' outbox — except those a webhook delivery still waits on — and the
// highest seq deleted is kept, so a reader whose cursor lies below it is told to
// resynchronise instead of silently missing changes. The deletion walks the old
// events in seq order in slices (model/slices.ts), each its own transaction that
// also records how far it got, so a prune of millions of events never holds the
// database for long and one that stops halfway has kept its promise so far.
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { formatDatetime } from '../model/dates.ts';
import { DEFAULT_SLICES, type SliceLimits, Slices } from '../model/slices.ts';

export interface Pruned {
  /** Events deleted by this run. */
  readonly deleted: number;
  /** The highest seq ever pruned: `seq>N` with N below it answers 410. */
  readonly through: number;
}

const DAY_MS = 86_400_000;

/** Deletes the changes (and other events) older than `days` days before `now`. */
export async function pruneChanges(database: Database, days: number, now: Date, limits: SliceLimits = DEFAULT_SLICES): Promise<Pruned> {
  const cutoff = formatDatetime(new Date(now.getTime() - days * DAY_MS));
  const { hooks } = database;
  // The newest old event: the walk stops there (a delivery finishing meanwhile must not free an event past it).
  const { rows: [newest] } = await sql<{ top: number | string | null }>`SELECT MAX(seq) AS top FROM events WHERE created < ${cutoff}`
    .execute(database.db);
  const top = newest?.top === null || newest?.top === undefined ? null : Number(newest.top);
  const slices = new Slices(limits);
  let deleted = 0;
  for (let after = 0; top !== null && after < top;) {
    const done = await slices.run((size) => database.transaction(async (db) => {
      const { rows } = await sql<{ seq: number | string }>`SELECT e.seq FROM events AS e
        WHERE e.seq > ${after} AND e.seq <= ${top} AND e.created < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS d WHERE d.event_seq = e.seq AND d.status IN ('pending', 'retrying'))
        ORDER BY e.seq LIMIT ${size}`.execute(db);
      if (rows.length === 0) return null;
      const seqs = rows.map((r) => Number(r.seq));
      const last = seqs[seqs.length - 1]!;
      const r = await sql`DELETE FROM events WHERE ${hooks.inIds(sql.ref('seq'), hooks.idList(seqs))}`.execute(db);
      deleted += Number(r.numAffectedRows ?? 0);
      await sql`UPDATE changes_pruned SET through = ${last} WHERE id = 1 AND through < ${last}`.execute(db);
      return last;
    }));
    if (done === null) break;
    after = done;
  }
  return { deleted, through: await prunedThrough(database) };
}

const PRUNED = sql<{ through: number | string }>`SELECT through FROM changes_pruned WHERE id = 1`;

/** The highest seq pruned so far (0: none). */
export async function prunedThrough(database: Database): Promise<number> {
  const [row] = await database.read<{ through: number | string }>(database.statements.get('changes|pruned', () => PRUNED), {});
  return Number(row?.through ?? 0);
}
