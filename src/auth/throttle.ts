// Login throttling (spec §2.2): after a failed login for a username, further
// attempts for it wait 1 s, 2 s, 4 s … (at most 15 min); a certificate also has an
// hourly budget of failures. State is in the database, shared by all instances.
import type { Db } from '../db/database.ts';
import { rateLimited } from '../errors.ts';

const MAX_DELAY_S = 15 * 60;
const HOUR_MS = 3_600_000;

const wait = (seconds: number) =>
  rateLimited(`Can't retry login this soon after a failed authentication. Please wait ${seconds} seconds`, seconds);

const secondsUntil = (at: number, now: Date) => Math.max(1, Math.ceil((at - now.getTime()) / 1000));

/** Refuses (429) while the username's delay runs or the certificate's budget is spent. */
export async function checkThrottle(db: Db, username: string, clientId: number, now: Date, budget: number): Promise<void> {
  const row = await db.selectFrom('login_throttle').select('retry_at').where('username', '=', username).executeTakeFirst();
  if (row && Date.parse(row.retry_at) > now.getTime()) throw wait(secondsUntil(Date.parse(row.retry_at), now));
  const spent = await db.selectFrom('login_budget').select(['window_start', 'failures']).where('client_id', '=', clientId).executeTakeFirst();
  const windowEnd = spent ? Date.parse(spent.window_start) + HOUR_MS : 0;
  if (spent && windowEnd > now.getTime() && spent.failures >= budget) throw wait(secondsUntil(windowEnd, now));
}

export async function recordFailure(db: Db, username: string, clientId: number, now: Date): Promise<void> {
  const row = await db.selectFrom('login_throttle').select('failures').where('username', '=', username).executeTakeFirst();
  const failures = (row?.failures ?? 0) + 1;
  const retryAt = new Date(now.getTime() + Math.min(2 ** Math.min(failures - 1, 30), MAX_DELAY_S) * 1000).toISOString();
  await db.insertInto('login_throttle').values({ username, failures, retry_at: retryAt })
    .onConflict((oc) => oc.column('username').doUpdateSet({ failures, retry_at: retryAt })).execute();
  const spent = await db.selectFrom('login_budget').select(['window_start', 'failures']).where('client_id', '=', clientId).executeTakeFirst();
  const fresh = !spent || Date.parse(spent.window_start) + HOUR_MS <= now.getTime();
  const next = fresh ? { window_start: now.toISOString(), failures: 1 } : { window_start: spent.window_start, failures: spent.failures + 1 };
  await db.insertInto('login_budget').values({ client_id: clientId, ...next })
    .onConflict((oc) => oc.column('client_id').doUpdateSet(next)).execute();
}

export async function clearThrottle(db: Db, username: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('username', '=', username).execute();
}
