// Background work runs in slices: each a short transaction of a bounded number of
// records, with a turn of the event loop between two, so that requests are served
// and their writes get the writer (SQLite's one connection, or locks on PostgreSQL)
// between slices instead of after the whole job. A slice's size adapts to its
// time: halved while slices run long, doubled back while they run short — but
// never below a quarter of the most, since each slice pays a few statements and a
// commit (an fsync on SQLite): slices of 25 records made a 100,000-asset reminder
// run take 170 s instead of 35 s.

export interface SliceLimits {
  /** Records per slice at most (and at first). */
  readonly records: number;
  /** A slice taking longer than this halves the next one; one under a quarter of it doubles it. */
  readonly ms: number;
}

export const DEFAULT_SLICES: SliceLimits = { records: 500, ms: 250 };

export class Slices {
  private current: number;
  constructor(private readonly limits: SliceLimits = DEFAULT_SLICES) {
    this.current = limits.records;
  }

  /** How many records the next slice takes. */
  get size(): number { return this.current; }

  /** Runs one slice (`fn` gets its size), then adapts the next size and yields a turn of the event loop. */
  async run<T>(fn: (size: number) => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await fn(this.current);
    const ms = performance.now() - started;
    if (ms > this.limits.ms) this.current = Math.max(Math.ceil(this.limits.records / 4), Math.floor(this.current / 2));
    else if (ms < this.limits.ms / 4) this.current = Math.min(this.limits.records, this.current * 2);
    await nextTurn();
    return result;
  }
}

/** Resolves after the event loop has had a turn (pending I/O is served first). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Long work on this thread (reading a 100,000-row import) asks `due()` as it goes
 * and, when it says so, awaits `nextTurn()`: the event loop gets a turn at least
 * every `ms` milliseconds.
 */
export class Pacer {
  private since = performance.now();
  constructor(private readonly ms = 10) {}

  due(): boolean {
    if (performance.now() - this.since < this.ms) return false;
    this.since = performance.now();
    return true;
  }
}
