// The bounded LRU behind the statement, client and rate-limit caches: never more
// than `max` entries, the least recently used forgotten first, a recent hit left in
// place and an older one moved to the newest end. Checked against a plain model of
// the rule over random operations (fast-check).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Lru } from '../../src/model/lru.ts';

/** The rule written plainly: insertion order with a sequence number per entry. */
class Model {
  readonly order: { key: number; value: number; seq: number }[] = [];
  private seq = 0;
  constructor(private readonly max: number) {}

  get(key: number): number | undefined {
    const i = this.order.findIndex((e) => e.key === key);
    if (i < 0) return undefined;
    const entry = this.order[i]!;
    if (this.seq - entry.seq >= Math.max(1, Math.floor(this.max / 2))) {
      this.order.splice(i, 1);
      entry.seq = ++this.seq;
      this.order.push(entry);
    }
    return entry.value;
  }

  set(key: number, value: number): void {
    const i = this.order.findIndex((e) => e.key === key);
    if (i >= 0) this.order.splice(i, 1);
    if (this.order.length >= this.max) this.order.shift();
    this.order.push({ key, value, seq: ++this.seq });
  }
}

describe('Lru', () => {
  it('forgets the least recently used entry first, and moves an entry read once it is among the older half', () => {
    const lru = new Lru<string, number>(4);
    for (const [i, k] of ['a', 'b', 'c', 'd'].entries()) lru.set(k, i);
    assert.equal(lru.get('a'), 0); // 3 insertions old of 4: moved to the newest end
    lru.set('e', 4);
    assert.deepEqual([...lru.all()].map(([k]) => k), ['c', 'd', 'a', 'e']);
    assert.equal(lru.get('e'), 4); // the newest: left where it is
    lru.set('f', 5);
    assert.deepEqual([...lru.all()].map(([k]) => k), ['d', 'a', 'e', 'f']);
    assert.equal(lru.get('b'), undefined);
    assert.equal(lru.size, 4);
  });

  it('agrees with the plain rule, and never holds more than its bound, over random operations', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 12 }), value: fc.integer() }),
    );
    fc.assert(fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 200 }), (max, ops) => {
      const lru = new Lru<number, number>(max);
      const model = new Model(max);
      for (const o of ops) {
        if (o.kind === 'get') assert.equal(lru.get(o.key), model.get(o.key));
        else { lru.set(o.key, o.value); model.set(o.key, o.value); }
        assert.ok(lru.size <= max);
        assert.deepEqual([...lru.all()], model.order.map((e) => [e.key, e.value]));
      }
    }), { numRuns: 300 });
  });
});
