// Reminder digests. A reminder run's delivery slices write, in the same transaction
// as the reminders they mark sent, one item per user and asset (mail_digest_items);
// so a run that dies between slices loses none and sends none twice. At the end of a
// company's part of the run, one transaction seals each user's unsealed items into
// one digest (a mail_outbox row). Two instances sealing at once cannot put an item in
// two digests: each item is taken by a conditional update (digest_id IS NULL), and a
// digest that took none is dropped. Items a run left unsealed (it died) go into the
// next run's digest.
import { sql } from 'kysely';
import type { Database, Db } from '../db/database.ts';
import { type Clock, formatDatetime } from '../model/dates.ts';
import type { SqlDialect } from '../model/dialect.ts';
import type { FieldType } from '../model/types.ts';
import type { DueRow } from './render.ts';

/** One user's item: the user, the asset, the next check it is due for, and whether that is past. */
export type DigestItem = readonly [userId: number, assetId: number, dueDate: string, overdue: 0 | 1];

const ITEM_TYPES: readonly FieldType[] = ['int', 'int', 'int', 'date', 'int'];
/** A digest lists this many assets at most; it says how many more there are (the portal lists them all). */
export const LISTED_AT_MOST = 500;

/** Writes a delivery slice's items, in its transaction. */
export async function queueDigestItems(db: Db, hooks: SqlDialect, companyId: number, items: readonly DigestItem[]): Promise<void> {
  if (items.length === 0) return;
  await sql`INSERT INTO mail_digest_items (company_id, user_id, asset_id, due_date, overdue)
    ${hooks.selectRows(hooks.rowList(items.map((i) => [companyId, ...i])), ITEM_TYPES)}`.execute(db);
}

/** Seals each user's unsealed items of the company into one digest; the digests queued. */
export async function sealDigests(database: Database, companyId: number, clock: Clock): Promise<number> {
  return database.transaction(async (db) => {
    const users = await db.selectFrom('mail_digest_items').select('user_id').distinct()
      .where('company_id', '=', companyId).where('digest_id', 'is', null).execute();
    const now = formatDatetime(clock.now());
    let sealed = 0;
    for (const { user_id: userId } of users) {
      const row = await db.insertInto('mail_outbox').values({ company_id: companyId, user_id: Number(userId), kind: 'digest', data: null,
        attempt: 0, status: 'pending', next_attempt: now, created: now, modified: now }).returning('id').executeTakeFirstOrThrow();
      const id = Number(row.id);
      const taken = await db.updateTable('mail_digest_items').set({ digest_id: id })
        .where('company_id', '=', companyId).where('user_id', '=', Number(userId)).where('digest_id', 'is', null).executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 0) await db.deleteFrom('mail_outbox').where('id', '=', id).execute();
      else sealed++;
    }
    return sealed;
  });
}

/** A digest's rows (the first LISTED_AT_MOST) and how many more it has. */
export async function digestRows(db: Db, digestId: number): Promise<{ rows: DueRow[]; more: number }> {
  const { rows } = await sql<{ asset_id: number; asset_no: string; description: string; location: string | null; due_date: string; overdue: number }>`
    SELECT i.asset_id, a.asset_no, a.description, l.description AS location, i.due_date, i.overdue
    FROM mail_digest_items i JOIN assets a ON a.id = i.asset_id LEFT JOIN locations l ON l.id = a.location_id
    WHERE i.digest_id = ${digestId} ORDER BY i.id LIMIT ${LISTED_AT_MOST}`.execute(db);
  const count = await db.selectFrom('mail_digest_items').select((e) => e.fn.countAll<number>().as('n')).where('digest_id', '=', digestId)
    .executeTakeFirst();
  return {
    rows: rows.map((r) => ({ assetId: Number(r.asset_id), assetNo: r.asset_no, description: r.description, location: r.location,
      nextCheck: r.due_date, overdue: Number(r.overdue) === 1 })),
    more: Math.max(0, Number(count?.n ?? 0) - rows.length),
  };
}
