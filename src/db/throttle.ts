// Login throttling state: per username and per certificate, shared by
// all instances. An attempt is claimed — and counted as a failure — atomically
// before its password is checked, so parallel guesses cannot slip past the delay.
// A refused attempt writes nothing, and usernames are kept as their SHA-256, so a
// password sprayer cannot grow the table: it holds at most one row per username
// that failed within the window (pruned after it) and one per certificate.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Database, Db } from './database.ts';
import { deleteInSlices } from './sweep.ts';

export interface ThrottleRule {
  /** Delay after the given number of consecutive failures. */
  delayMs(failures: number): number;
  /** Failed logins a certificate may make per window. */
  readonly budget: number;
  readonly windowMs: number;
}

/** Whose failures a login spends: a certificate's (the API) or a client address's (the portal, which has no certificate). */
export type LoginSpender = { readonly clientId: number } | { readonly address: string };

const budgetOf = (s: LoginSpender) => ('clientId' in s
  ? { table: sql.table('login_budget'), column: sql.ref('client_id'), value: s.clientId }
  : { table: sql.table('login_address_budget'), column: sql.ref('address'), value: s.address });

const EPOCH = new Date(0).toISOString();
const secondsUntil = (at: number, now: Date) => Math.max(1, Math.ceil((at - now.getTime()) / 1000));

/** How a username is kept: fixed-size, whatever was typed. */
const keyOf = (username: string) => createHash('sha256').update(username).digest('hex');

/** Claims an attempt: null, or the whole seconds to wait when the certificate or the username is held back. */
export async function claimLoginAttempt(database: Database, username: string, spender: LoginSpender, now: Date, rule: ThrottleRule): Promise<number | null> {
  const lock = database.hooks.lockMatched;
  const key = keyOf(username);
  const { table, column, value } = budgetOf(spender);
  return database.transaction(async (db) => {
    // One row per certificate (or address), made once; locked, so that its attempts take turns.
    await sql`INSERT INTO ${table} (${column}, window_start, failures) VALUES (${value}, ${now.toISOString()}, 0)
      ON CONFLICT DO NOTHING`.execute(db);
    const { rows: [spent] } = await sql<{ window_start: string; failures: number }>`SELECT window_start, failures FROM ${table} AS t
      WHERE ${column} = ${value} ${lock}`.execute(db);
    const windowEnd = Date.parse(spent!.window_start) + rule.windowMs;
    const fresh = windowEnd <= now.getTime();
    if (!fresh && Number(spent!.failures) >= rule.budget) return secondsUntil(windowEnd, now);
    // A username held back has its row already; a new one gets its row only for an attempt that is claimed.
    await sql`INSERT INTO login_throttle (username, failures, retry_at) VALUES (${key}, 0, ${EPOCH}) ON CONFLICT DO NOTHING`.execute(db);
    const { rows: [user] } = await sql<{ failures: number; retry_at: string }>`SELECT failures, retry_at FROM login_throttle AS t
      WHERE username = ${key} ${lock}`.execute(db);
    if (Date.parse(user!.retry_at) > now.getTime()) return secondsUntil(Date.parse(user!.retry_at), now);
    const failures = Number(user!.failures) + 1;
    await sql`UPDATE login_throttle SET failures = ${failures}, retry_at = ${new Date(now.getTime() + rule.delayMs(failures)).toISOString()}
      WHERE username = ${key}`.execute(db);
    await sql`UPDATE ${table} SET window_start = ${fresh ? now.toISOString() : spent!.window_start},
      failures = ${fresh ? 1 : Number(spent!.failures) + 1} WHERE ${column} = ${value}`.execute(db);
    return null;
  });
}

/** A claimed attempt whose password was right: the username's delay ends and it costs the certificate nothing. */
export async function releaseLoginAttempt(db: Db, username: string, spender: LoginSpender): Promise<void> {
  const { table, column, value } = budgetOf(spender);
  await db.deleteFrom('login_throttle').where('username', '=', keyOf(username)).execute();
  await sql`UPDATE ${table} SET failures = failures - 1 WHERE ${column} = ${value} AND failures > 0`.execute(db);
}

/** Forgets usernames whose last failure is older than the window: their next failure starts the doubling afresh. */
export function pruneLoginThrottle(database: Database, now: Date, windowMs: number): Promise<number> {
  return deleteInSlices(database, 'login_throttle', sql`retry_at < ${new Date(now.getTime() - windowMs).toISOString()}`);
}
