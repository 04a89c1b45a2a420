// Sessions (spec §2.2): 32 random bytes, hex; only their SHA-256 is stored; bound
// to the certificate that logged in; 24 hours after last use, sliding.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { badSession } from '../errors.ts';
import { formatDatetime } from '../model/dates.ts';
import type { Principal } from '../model/principal.ts';
import { levelOf } from './access.ts';

export const SESSION_MS = 24 * 3_600_000;

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

export async function createSession(db: Db, clientId: number, user: { id: number; company_id: number }, now: Date): Promise<string> {
  const token = randomBytes(32).toString('hex');
  const at = formatDatetime(now);
  await db.deleteFrom('sessions').where('expires', '<=', at).execute();
  await db.insertInto('sessions').values({
    token_hash: hashOf(token), client_id: clientId, user_id: user.id, company_id: user.company_id,
    created: at, last_used: at, expires: formatDatetime(new Date(now.getTime() + SESSION_MS)),
  }).execute();
  return token;
}

const TOKEN = /^[0-9a-f]{64}$/;

/** The token of an `Authorization: Basic base64("session:" + token)` header; anything else is a bad session. */
export function tokenFrom(header: string): string {
  const m = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!m) throw badSession();
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const token = decoded.slice(colon + 1);
  if (colon < 0 || decoded.slice(0, colon) !== 'session' || !TOKEN.test(token)) throw badSession();
  return token;
}

/**
 * The principal a session acts as: the user's company tree and access level,
 * read afresh on every call. Every use moves the expiry.
 */
export async function resumeSession(db: Db, principal: Principal, token: string, now: Date): Promise<Principal> {
  const hash = hashOf(token);
  const at = formatDatetime(now);
  const row = await db.selectFrom('sessions as s').innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.id', 's.token_hash', 's.client_id', 's.expires', 'u.id as user_id', 'u.company_id', 'u.permissions'])
    .where('s.token_hash', '=', hash).executeTakeFirst();
  if (!row || !timingSafeEqual(Buffer.from(row.token_hash), Buffer.from(hash))) throw badSession();
  if (row.client_id !== principal.clientId || !principal.impersonation || row.expires <= at) throw badSession();
  await db.updateTable('sessions').set({ last_used: at, expires: formatDatetime(new Date(now.getTime() + SESSION_MS)) })
    .where('id', '=', row.id).execute();
  const { level, canCreateCompanies } = levelOf(row.permissions);
  const companyId = Number(row.company_id);
  return {
    ...principal, companyId, level, canCreateCompanies,
    session: { id: Number(row.id), token, userId: Number(row.user_id), companyId },
  };
}

export async function endSession(db: Db, sessionId: number): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

/** Ends a user's sessions, except (optionally) the one making the call. */
export async function endUserSessions(db: Db, userId: number, exceptSessionId: number | null): Promise<void> {
  let q = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (exceptSessionId !== null) q = q.where('id', '<>', exceptSessionId);
  await q.execute();
}

export async function sweepExpiredSessions(db: Db, now: Date): Promise<number> {
  const r = await db.deleteFrom('sessions').where('expires', '<=', formatDatetime(now)).executeTakeFirst();
  return Number(r.numDeletedRows);
}
