// When a failed delivery is tried again: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then
// every 10 h, each ±10 %, until 24 h after the event; a Retry-After from the
// receiver replaces the step. A webhook that has failed without a success for 24 h
// is switched off.
import type { RetrySchedule } from '../db/outbox.ts';

export const RETRY_STEPS_S = [5, 300, 1800, 7200, 18_000, 36_000] as const;
export const GIVE_UP_MS = 24 * 3600 * 1000;

/** Milliseconds until attempt `attempt + 1` after `attempt` attempts failed (attempt ≥ 1). */
export function retryDelayMs(attempt: number, retryAfterS: number | null, random = Math.random): number {
  if (retryAfterS !== null) return Math.max(1, retryAfterS) * 1000;
  const step = RETRY_STEPS_S[Math.min(attempt, RETRY_STEPS_S.length) - 1]!;
  return Math.round(step * 1000 * (0.9 + 0.2 * random()));
}

/** The webhooks' schedule, as the outboxes' shared settle() reads it. */
export const WEBHOOK_SCHEDULE: RetrySchedule = { giveUpMs: GIVE_UP_MS, delayMs: (attempt, retryAfterS) => retryDelayMs(attempt, retryAfterS) };
