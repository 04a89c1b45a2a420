// Requests per certificate, decided in memory on every request — no
// database round trip — and, with several instances, reconciled with a shared
// store every SYNC_MS: each instance pushes the cells its buckets consumed and
// takes back every key's common TAT. Between reconciliations an instance may
// spend only its share of the burst (burst ÷ live instances), so that instances
// together let through at most about rate × seconds + burst, whatever the client
// spreads over them.
import { Lru } from '../model/lru.ts';
import { rateLimitRefusals } from '../metrics.ts';
import { type Decision, decide, interval, type Policy } from './gcra.ts';

export interface SharedStore {
  /**
   * Adds each key's consumed time (ms of TAT, ≥ 0) to the common TAT — which is
   * never behind `now` — and returns every key's TAT after it, and how many
   * instances reconciled within the last few seconds (this one included).
   */
  reconcile(instance: string, consumed: ReadonlyMap<string, number>, now: number): Promise<{ tats: Map<string, number>; instances: number }>;
  close(): Promise<void>;
}

interface Bucket {
  tat: number;
  /** TAT consumed here since the last push. */
  pending: number;
  /** The last request (ms), to forget quiet keys. */
  seen: number;
}

export interface LimiterOptions {
  readonly onError?: (e: unknown) => void;
  /** Milliseconds now (tests step it by hand). */
  readonly now?: () => number;
  /** Reconcile on a timer this often; null: only when sync() is called (tests). */
  readonly syncMs?: number | null;
}

export const SYNC_MS = 100;
/** Keys reconciled after their last request here, so that their common TAT keeps flowing back. */
const ACTIVE_MS = 5_000;
const MAX_KEYS = 100_000;

export class RateLimiter {
  private readonly buckets = new Lru<string, Bucket>(MAX_KEYS);
  private share = 1;
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private readonly instance = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  private readonly onError: (e: unknown) => void;
  private readonly now: () => number;

  constructor(readonly policy: Policy, private readonly shared: SharedStore | null, o: LimiterOptions = {}) {
    this.onError = o.onError ?? (() => {});
    this.now = o.now ?? Date.now;
    const every = o.syncMs === undefined ? SYNC_MS : o.syncMs;
    if (shared && every !== null) {
      this.timer = setInterval(() => { void this.sync(); }, every);
      this.timer.unref();
    }
  }

  /** Spends one request of `key`'s bucket, if it has one to spend. */
  take(key: string): Decision {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = { tat: now, pending: 0, seen: now }));
    const { decision, tat } = decide(this.policy, bucket.tat, now, this.share);
    if (decision.allowed) {
      bucket.pending += interval(this.policy);
      bucket.tat = tat;
    } else {
      rateLimitRefusals.inc();
    }
    bucket.seen = now;
    return decision;
  }

  /** One reconciliation with the shared store (the timer's; tests call it directly). */
  sync(): Promise<void> {
    const now = this.now();
    if (!this.shared || this.syncing) return this.syncing ?? Promise.resolve();
    const sent = new Map<string, number>();
    for (const [key, bucket] of this.buckets.all()) {
      if (now - bucket.seen > ACTIVE_MS) continue;
      sent.set(key, bucket.pending);
      bucket.pending = 0;
    }
    const shared = this.shared;
    this.syncing = (async () => {
      try {
        const { tats, instances } = await shared.reconcile(this.instance, sent, now);
        this.share = Math.max(1, instances);
        for (const [key, tat] of tats) {
          const bucket = this.buckets.get(key);
          // What was spent here while the round trip ran is not in the common TAT yet.
          if (bucket) bucket.tat = Math.max(tat, this.now()) + bucket.pending;
        }
      } catch (error) {
        // Unsent consumption is kept for the next round; meanwhile each instance limits alone.
        for (const [key, cost] of sent) { const b = this.buckets.get(key); if (b) b.pending += cost; }
        this.onError(error);
      } finally {
        this.syncing = null;
      }
    })();
    return this.syncing;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.syncing;
    await this.shared?.close();
  }
}
