// Calendar feed links: one per user, 32 random bytes as hex, of which only the
// SHA-256 is kept — so a link is shown once, when it is made, and replacing it (or
// turning it off) is the only way to end the old one. The link acts as its user:
// the user's company tree and level as they are when the calendar is read.
import { createHash, randomBytes } from 'node:crypto';
import { levelOf } from '../auth/access.ts';
import type { Database } from '../db/database.ts';
import { type Clock, formatDatetime, systemClock } from '../model/dates.ts';
import type { Principal } from '../model/principal.ts';

const TOKEN = /^[0-9a-f]{64}$/;
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Makes the user's calendar link anew (the old one, if any, ends in the same transaction); returns its token. */
export async function replaceFeedToken(database: Database, userId: number, clock: Clock = systemClock): Promise<string> {
  const token = randomBytes(32).toString('hex');
  await database.transaction(async (db) => {
    await db.deleteFrom('calendar_feeds').where('user_id', '=', userId).execute();
    await db.insertInto('calendar_feeds').values({ user_id: userId, token_hash: hashOf(token), created: formatDatetime(clock.now()) }).execute();
  });
  return token;
}

export async function removeFeedToken(database: Database, userId: number): Promise<void> {
  await database.db.deleteFrom('calendar_feeds').where('user_id', '=', userId).execute();
}

/** When the user's current link was made, or null when there is none. */
export async function feedCreated(database: Database, userId: number): Promise<string | null> {
  const row = await database.db.selectFrom('calendar_feeds').select('created').where('user_id', '=', userId).executeTakeFirst();
  return row?.created ?? null;
}

/** Whom a link acts as, or null for a token that is no live link. */
export async function feedPrincipal(database: Database, token: string): Promise<Principal | null> {
  if (!TOKEN.test(token)) return null;
  const row = await database.db.selectFrom('calendar_feeds as f').innerJoin('users as u', 'u.id', 'f.user_id')
    .select(['u.company_id', 'u.permissions']).where('f.token_hash', '=', hashOf(token)).executeTakeFirst();
  if (!row) return null;
  const { level, canCreateCompanies } = levelOf(row.permissions);
  const companyId = Number(row.company_id);
  return { clientId: null, clientCompanyId: companyId, impersonation: false, companyId, level, canCreateCompanies, session: null };
}
