/** A Map bounded to `max` entries that forgets the least recently used one first. */
export class Lru<K, V> {
  private readonly entries = new Map<K, V>();
  constructor(readonly max: number) {}

  get(key: K): V | undefined {
    const v = this.entries.get(key);
    if (v !== undefined) {
      // Re-inserting keeps the Map in least-recently-used order.
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, value);
  }

  clear(): void { this.entries.clear(); }

  /** Every entry, least recently used first (reading does not reorder). */
  *all(): Generator<[K, V]> { yield* this.entries; }

  get size(): number { return this.entries.size; }
}
