// The login throttle's policy: after a failed login for a username,
// further attempts wait 1 s, 2 s, 4 s … at most 15 min; a certificate may fail
// LOGIN_FAILURES_PER_HOUR times an hour, and so may a client address on the portal. The state lives in db/throttle.ts.
import type { Database } from '../db/database.ts';
import { claimLoginAttempt, type LoginSpender, pruneLoginThrottle } from '../db/throttle.ts';
import { rateLimited } from '../errors.ts';

export { releaseLoginAttempt as attemptSucceeded, type LoginSpender } from '../db/throttle.ts';

const MAX_DELAY_S = 15 * 60;
const HOUR_MS = 3_600_000;

const delayMs = (failures: number) => Math.min(2 ** Math.min(failures - 1, 30), MAX_DELAY_S) * 1000;

/** Claims a login attempt, or refuses it with 429 and Retry-After. */
export async function claimAttempt(database: Database, username: string, spender: LoginSpender, now: Date, budget: number): Promise<void> {
  const wait = await claimLoginAttempt(database, username, spender, now, { delayMs, budget, windowMs: HOUR_MS });
  if (wait !== null) {
    throw rateLimited(`Can't retry login this soon after a failed authentication. Please wait ${wait} seconds`, wait);
  }
}

/** Drops what the throttle remembers of usernames that have not failed for a window (the background job). */
export const sweepLoginThrottle = (database: Database, now: Date) => pruneLoginThrottle(database, now, HOUR_MS);
