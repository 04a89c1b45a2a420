// One-click unsubscribe (RFC 8058): every digest carries BASE_URL/unsubscribe/<token>,
// where the token is the user's id and an HMAC-SHA256 of it under a key the service
// keeps in its store (made once, shared by every instance). GET shows a page with a
// button and changes nothing (mail scanners follow links); POST turns the user's
// reminders off, audited as that user, with no certificate and the client's address.
// A token that does not verify, or names no user, is not found.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { serviceSecret } from '../db/service-secrets.ts';
import { insertAudit } from '../engine/audit.ts';
import { type Clock, formatDatetime } from '../model/dates.ts';
import { operatorContext } from '../resources/registry.ts';
import { escapeHtml } from './render.ts';

const keys = new WeakMap<Database, Promise<Buffer>>();

/** The signing key: read from the store, made there first if it has none (the first writer's wins). */
function keyOf(database: Database): Promise<Buffer> {
  let key = keys.get(database);
  if (!key) {
    key = serviceSecret(database, 'unsubscribe', new Date());
    key.catch(() => keys.delete(database));
    keys.set(database, key);
  }
  return key;
}

const mac = (key: Buffer, userId: number) => createHmac('sha256', key).update(`unsubscribe:${userId}`).digest();

export async function unsubscribeUrl(database: Database, baseUrl: string, userId: number): Promise<string> {
  return `${baseUrl}/unsubscribe/${userId}.${mac(await keyOf(database), userId).toString('base64url')}`;
}

/** The user a token names, when it verifies and the user exists. */
async function userOf(database: Database, token: string): Promise<{ id: number; company_id: number; reminders: number } | null> {
  const m = /^([1-9]\d{0,15})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return null;
  const userId = Number(m[1]);
  // The text as made, not its decoding: the last of 43 characters carries 2 bits no decoder reads.
  const given = Buffer.from(m[2]!);
  const expected = Buffer.from(mac(await keyOf(database), userId).toString('base64url'));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const user = await database.db.selectFrom('users').select(['id', 'company_id', 'reminders']).where('id', '=', userId).executeTakeFirst();
  return user ? { id: Number(user.id), company_id: Number(user.company_id), reminders: Number(user.reminders) } : null;
}

/** GET: whether the token is good (the page is shown), changing nothing. */
export const tokenIsGood = async (database: Database, token: string): Promise<boolean> => (await userOf(database, token)) !== null;

/** POST: turns the user's reminders off; false when the token is not good. */
export async function unsubscribe(database: Database, token: string, ip: string | null, clock: Clock): Promise<boolean> {
  const user = await userOf(database, token);
  if (!user) return false;
  const ctx = { ...operatorContext(database, user.company_id, clock), ip };
  await database.transaction(async (db) => {
    const changed = await db.updateTable('users').set({ reminders: 0, modified: formatDatetime(clock.now()) })
      .where('id', '=', user.id).where('reminders', '<>', 0).executeTakeFirst();
    if (Number(changed.numUpdatedRows) === 0) return;
    await insertAudit(ctx, db, formatDatetime(clock.now()), [{
      endpoint: 'users', action: 'update', recordId: user.id, companyId: user.company_id, userId: user.id,
      message: `Updated users record ${user.id} (unsubscribed from reminder e-mails)`, olddata: '{"reminders":1}', newdata: '{"reminders":0}',
    }]);
  });
  return true;
}

/** The page: a button that posts to the same address, or what it did. */
export function unsubscribePage(done: boolean): string {
  const body = done
    ? '<h1>Unsubscribed</h1><p>You will get no more reminder e-mails. A company admin can turn them on again.</p>'
    : '<h1>Stop reminder e-mails?</h1><p>You will no longer get reminder e-mails about assets due for a check.</p>'
      + '<form method="post"><button type="submit">Unsubscribe</button></form>';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">`
    + `<title>${escapeHtml(done ? 'Unsubscribed' : 'Unsubscribe')}</title></head><body style="font-family:sans-serif;max-width:32em;margin:2em auto">`
    + `${body}</body></html>`;
}
