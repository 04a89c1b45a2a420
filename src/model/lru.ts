/**
 * A Map bounded to `max` entries that forgets the least recently used one first.
 *
 * A hit on an entry among the newer half of the insertions is not moved: the caches
 * of the request path (statements, clients, rate-limit buckets) live long, so their
 * Map sits in V8's old space, and the delete-and-set of every hit had V8 allocate
 * the Map's new tables there (a heap profile of W1 counted 14.6 MB of them in 8 s,
 * garbage only a full collection clears). An entry read again while it is among the
 * newest `max / 2` is at least that many insertions from being forgotten; older ones
 * move to the newest end as before.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; seq: number }>();
  /** Insertions so far: an entry's `seq` is its place in the Map's order. */
  private seq = 0;
  private readonly recent: number;

  constructor(readonly max: number) {
    this.recent = Math.max(1, Math.floor(max / 2));
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.seq - entry.seq >= this.recent) {
      this.entries.delete(key);
      entry.seq = ++this.seq;
      this.entries.set(key, entry);
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, { value, seq: ++this.seq });
  }

  clear(): void { this.entries.clear(); }

  /** Every entry, least recently used first (reading does not reorder). */
  *all(): Generator<[K, V]> {
    for (const [key, entry] of this.entries) yield [key, entry.value];
  }

  get size(): number { return this.entries.size; }
}
