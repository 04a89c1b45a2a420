// What the operator does to webhooks: rotate a secret, queue a
// delivery again. Each is one transaction, audited.
import { AdminError } from '../errors.ts';
import { audit } from './accounts.ts';
import type { Database } from '../db/database.ts';
import { type Clock, formatDatetime, systemClock } from '../model/dates.ts';
import { newSecret } from '../events/secret.ts';

/** How long deliveries are signed with the previous secret too after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** Gives the webhook a new secret (returned, to be shown once); the old one signs too for 24 h. */
export async function rotateSecret(database: Database, id: number, clock: Clock = systemClock): Promise<{ secret: string; previousUntil: string }> {
  const secret = newSecret();
  const previousUntil = formatDatetime(new Date(clock.now().getTime() + ROTATION_OVERLAP_MS));
  await database.transaction(async (db) => {
    const hook = await db.selectFrom('webhooks').select(['company_id', 'secret']).where('id', '=', id).executeTakeFirst();
    if (!hook) throw new AdminError(`webhook ${id} does not exist`);
    await db.updateTable('webhooks').set({ secret, previous_secret: hook.secret, previous_until: previousUntil }).where('id', '=', id).execute();
    await audit(database, db, clock, Number(hook.company_id), { endpoint: 'webhooks', action: 'update', recordId: id,
      message: `Rotated the secret of webhooks record ${id}; the previous one signs too until ${previousUntil}` });
  });
  return { secret, previousUntil };
}

/** Queues one more delivery of the event to every webhook that had it; returns how many. */
export async function redeliver(database: Database, eventId: string, clock: Clock = systemClock): Promise<number> {
  const now = formatDatetime(clock.now());
  return database.transaction(async (db) => {
    const rows = await db.selectFrom('webhook_deliveries').select(['id', 'company_id', 'webhook_id']).where('event_id', '=', eventId).execute();
    if (rows.length === 0) throw new AdminError(`no webhook has had event ${eventId}`);
    await db.updateTable('webhook_deliveries').set({ status: 'pending', next_attempt: now, modified: now }).where('event_id', '=', eventId).execute();
    for (const r of rows) {
      await audit(database, db, clock, Number(r.company_id), { endpoint: 'webhooks', action: 'note', recordId: Number(r.webhook_id),
        message: `Queued event ${eventId} again for webhooks record ${r.webhook_id}` });
    }
    return rows.length;
  });
}
