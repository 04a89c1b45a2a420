// The generic cell rate algorithm (GCRA), the token bucket written as one number:
// a key's theoretical arrival time (TAT). A request at `now` is let through when
// TAT − now ≤ τ, and then moves TAT on by one emission interval T = 1 s / rate.
// τ = (burst − 1)·T lets `burst` requests through at once after a pause. Pure:
// times are milliseconds, nothing here knows of keys, stores or HTTP.

export interface Policy {
  /** Requests per second, sustained. */
  readonly rate: number;
  /** Requests let through at once after a pause. */
  readonly burst: number;
}

export interface Decision {
  readonly allowed: boolean;
  /** Requests that would still be let through now. */
  readonly remaining: number;
  /** Whole seconds until the bucket is full again. */
  readonly resetSeconds: number;
  /** Whole seconds to wait before a refused request would be let through (0 when allowed). */
  readonly retryAfterSeconds: number;
}

export const interval = (p: Policy) => 1000 / p.rate;

/** τ for a policy whose burst is shared by `share` instances (each may use its part between reconciliations). */
export const tolerance = (p: Policy, share = 1) => Math.max(0, (p.burst / share - 1) * interval(p));

/** The decision for one request, and the key's TAT after it. */
export function decide(p: Policy, tat: number, now: number, share = 1): { decision: Decision; tat: number } {
  const t = interval(p);
  const tau = tolerance(p, share);
  const start = Math.max(tat, now);
  const allowed = start - now <= tau;
  const next = allowed ? start + t : tat;
  const ahead = Math.max(next, now) - now;
  return {
    tat: next,
    decision: {
      allowed,
      remaining: Math.max(0, Math.floor((tau - ahead) / t) + 1),
      resetSeconds: Math.ceil(ahead / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((start - now - tau) / 1000)),
    },
  };
}
