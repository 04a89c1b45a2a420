// The rate limiter's arithmetic: GCRA lets `burst` requests through at
// once, then one per 1/rate s; it says how many remain, when the bucket is full
// again and how long a refused request waits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide, type Policy } from '../../src/ratelimit/gcra.ts';
import { RateLimiter, type SharedStore } from '../../src/ratelimit/limiter.ts';

const P: Policy = { rate: 100, burst: 200 };

describe('GCRA', () => {
  it('lets exactly `burst` requests through at once, counting down what remains', () => {
    let tat = 0;
    for (let i = 1; i <= 200; i++) {
      const r = decide(P, tat, 0);
      assert.equal(r.decision.allowed, true, `request ${i}`);
      assert.equal(r.decision.remaining, 200 - i);
      tat = r.tat;
    }
    const refused = decide(P, tat, 0);
    assert.equal(refused.decision.allowed, false);
    assert.equal(refused.decision.remaining, 0);
    assert.equal(refused.decision.retryAfterSeconds, 1);
    assert.equal(refused.decision.resetSeconds, 2);
    assert.equal(refused.tat, tat, 'a refused request costs nothing');
  });

  it('then one request per interval, and a full bucket again after burst ÷ rate seconds', () => {
    let tat = 0;
    for (let i = 0; i < 200; i++) tat = decide(P, tat, 0).tat;
    assert.equal(decide(P, tat, 9).decision.allowed, false);
    const next = decide(P, tat, 10);
    assert.equal(next.decision.allowed, true);
    assert.equal(next.decision.remaining, 0);
    const later = decide(P, next.tat, 2010);
    assert.equal(later.decision.allowed, true);
    assert.equal(later.decision.remaining, 199);
    assert.equal(later.decision.resetSeconds, 1);
  });

  it('sustains exactly `rate` per second over a long run', () => {
    let tat = 0;
    let allowed = 0;
    for (let t = 0; t < 60_000; t += 1) if (decide(P, tat, t).decision.allowed) { tat = decide(P, tat, t).tat; allowed++; }
    assert.ok(allowed <= 100 * 60 + 200 && allowed >= 100 * 60, `${allowed}`);
  });

  it('waits whole seconds, at least one', () => {
    const slow: Policy = { rate: 0.5, burst: 1 };
    const first = decide(slow, 0, 0);
    const second = decide(slow, first.tat, 100);
    assert.equal(second.decision.allowed, false);
    assert.equal(second.decision.retryAfterSeconds, 2);
  });
});

describe('rate limiter instances sharing a store', () => {
  /** A store in memory with the same contract as the PostgreSQL and Redis ones. */
  function memoryStore(): SharedStore {
    const tats = new Map<string, number>();
    const seen = new Map<string, number>();
    return {
      async reconcile(instance, consumed, now) {
        seen.set(instance, now);
        const out = new Map<string, number>();
        for (const [key, cost] of consumed) { const tat = Math.max(tats.get(key) ?? 0, now) + cost; tats.set(key, tat); out.set(key, tat); }
        return { tats: out, instances: [...seen.values()].filter((t) => t > now - 3000).length };
      },
      close: async () => {},
    };
  }

  it('let through at most rate × 1.1 × seconds + burst together, each spending its share between reconciliations', async () => {
    const store = memoryStore();
    let now = 0;
    const policy: Policy = { rate: 50, burst: 100 };
    const a = new RateLimiter(policy, store, { now: () => now, syncMs: null });
    const b = new RateLimiter(policy, store, { now: () => now, syncMs: null });
    // Both announce themselves first, as running instances do within 100 ms of starting.
    await a.sync();
    await b.sync();
    let allowed = 0;
    const seconds = 10;
    for (now = 0; now < seconds * 1000; now += 2) {
      // A client sending far too fast to both instances.
      for (const limiter of [a, b]) if (limiter.take('cert').allowed) allowed++;
      if (now % 100 === 0) { await a.sync(); await b.sync(); }
    }
    const bound = policy.rate * 1.1 * seconds + policy.burst;
    assert.ok(allowed <= bound, `${allowed} let through, bound ${bound}`);
    assert.ok(allowed >= policy.rate * seconds * 0.9, `${allowed} let through: the limiter starves the client`);
  });
});
