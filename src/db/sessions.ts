// Session rows: only the token's hash is stored. Policy (tokens,
// expiry, levels) lives in auth/sessions.ts.
import { sql } from 'kysely';
import { type Database, type Db, execute } from './database.ts';
import { Param } from './statements.ts';
import { deleteInSlices } from './sweep.ts';

export interface SessionRow {
  readonly id: number;
  readonly token_hash: string;
  /** Null for a portal session. */
  readonly client_id: number | null;
  readonly expires: string;
  readonly user_id: number;
  /** The user's company now (not at login). */
  readonly company_id: number;
  readonly permissions: string | null;
}

export async function insertSession(
  db: Db, s: { token_hash: string; client_id: number | null; user_id: number; company_id: number; at: string; expires: string },
): Promise<void> {
  await db.deleteFrom('sessions').where('expires', '<=', s.at).execute();
  await db.insertInto('sessions').values({
    token_hash: s.token_hash, client_id: s.client_id, user_id: s.user_id, company_id: s.company_id,
    created: s.at, last_used: s.at, expires: s.expires,
  }).execute();
}

const P = { hash: new Param('hash'), id: new Param('id'), at: new Param('at'), expires: new Param('expires') };

/** A session with its user's current company and permissions (every call in a session: one prepared statement). */
export async function findSession(database: Database, tokenHash: string): Promise<SessionRow | undefined> {
  const statement = database.statements.get('session-by-hash', () => sql`SELECT s.id, s.token_hash, s.client_id, s.expires,
    u.id AS user_id, u.company_id, u.permissions FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ${P.hash}`);
  const [row] = await database.read<SessionRow>(statement, { hash: tokenHash });
  return row && { ...row, id: Number(row.id), client_id: row.client_id === null ? null : Number(row.client_id), user_id: Number(row.user_id),
    company_id: Number(row.company_id) };
}

export async function touchSession(database: Database, id: number, at: string, expires: string): Promise<void> {
  const statement = database.statements.get('session-touch',
    () => sql`UPDATE sessions SET last_used = ${P.at}, expires = ${P.expires} WHERE id = ${P.id}`);
  await execute(database.db, statement, { id, at, expires });
}

export async function deleteSession(db: Db, id: number): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

/** Ends a user's sessions, except (optionally) one. */
export async function deleteUserSessions(db: Db, userId: number, exceptId: number | null): Promise<void> {
  let q = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (exceptId !== null) q = q.where('id', '<>', exceptId);
  await q.execute();
}

export async function deleteClientSessions(db: Db, clientId: number): Promise<void> {
  await db.deleteFrom('sessions').where('client_id', '=', clientId).execute();
}

export function deleteExpiredSessions(database: Database, at: string): Promise<number> {
  return deleteInSlices(database, 'sessions', sql`expires <= ${at}`);
}
