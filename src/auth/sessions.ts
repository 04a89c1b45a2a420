// Sessions: 32 random bytes, hex; only their SHA-256 is stored; bound to the
// certificate that logged in (or, for the portal, to no certificate, so neither
// side can use the other's); 24 hours after last use, sliding.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database, Db } from '../db/database.ts';
import { deleteExpiredSessions, findSession, insertSession, type SessionRow, touchSession } from '../db/sessions.ts';
import { badSession } from '../errors.ts';
import { formatDatetime } from '../model/dates.ts';
import type { Principal } from '../model/principal.ts';
import { levelOf } from './access.ts';

export const SESSION_MS = 24 * 3_600_000;

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const expiryAfter = (now: Date) => formatDatetime(new Date(now.getTime() + SESSION_MS));

export async function createSession(db: Db, clientId: number | null, user: { id: number; company_id: number }, now: Date): Promise<string> {
  const token = randomBytes(32).toString('hex');
  await insertSession(db, { token_hash: hashOf(token), client_id: clientId, user_id: user.id, company_id: user.company_id,
    at: formatDatetime(now), expires: expiryAfter(now) });
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

/** The live session of a token, its expiry moved; bad_session unless `bound` accepts its certificate. */
async function liveSession(database: Database, token: string, now: Date, bound: (clientId: number | null) => boolean): Promise<SessionRow> {
  const hash = hashOf(token);
  const row = await findSession(database, hash);
  if (!row || !timingSafeEqual(Buffer.from(row.token_hash), Buffer.from(hash))) throw badSession();
  if (!bound(row.client_id) || row.expires <= formatDatetime(now)) throw badSession();
  const expires = expiryAfter(now);
  // Times are stored to the second: a second use within the same second has nothing to move.
  if (row.expires !== expires) await touchSession(database, row.id, formatDatetime(now), expires);
  return row;
}

const sessionOf = (row: SessionRow, token: string) => ({ id: row.id, token, userId: row.user_id, companyId: row.company_id });

/**
 * The principal a session acts as: the user's company tree and access level,
 * read afresh on every call. Every use moves the expiry.
 */
export async function resumeSession(database: Database, principal: Principal, token: string, now: Date): Promise<Principal> {
  const row = await liveSession(database, token, now, (clientId) => clientId === principal.clientId && principal.impersonation);
  const { level, canCreateCompanies } = levelOf(row.permissions);
  return { ...principal, companyId: row.company_id, level, canCreateCompanies, session: sessionOf(row, token) };
}

/** The principal of a portal session: the same user's scope and level, with no certificate. */
export async function resumePortalSession(database: Database, token: string, now: Date): Promise<Principal> {
  if (!TOKEN.test(token)) throw badSession();
  const row = await liveSession(database, token, now, (clientId) => clientId === null);
  const { level, canCreateCompanies } = levelOf(row.permissions);
  return {
    clientId: null, clientCompanyId: row.company_id, impersonation: false, companyId: row.company_id, level, canCreateCompanies,
    session: sessionOf(row, token),
  };
}

export { deleteSession as endSession, deleteUserSessions as endUserSessions } from '../db/sessions.ts';

export async function sweepExpiredSessions(database: Database, now: Date): Promise<number> {
  return deleteExpiredSessions(database, formatDatetime(now));
}
