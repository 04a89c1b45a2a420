// Statements are compiled once per shape and kept in a bounded cache (and, on
// PostgreSQL, prepared on a bounded number of names per connection). The filter
// grammar is the client's: a flood of distinct shapes must leave the cache at its
// bound and the process's memory flat, and every answer right.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { settledMemory } from '../support/workflows.ts';
import { create, expectOk, stop } from './resources-support.ts';
import type { Asset } from '../support/api.ts';

const SHAPES = 10_000;
const PARALLEL = 8;
const MiB = 1024 * 1024;

for (const kind of DB_KINDS) {
  describe(`statement cache (${kind})`, () => {
    let svc: Service;
    let api: TestClient;
    let marked: number;
    before(async () => {
      ({ svc, api } = await buildTenancy(kind, { top: 'Shapes' }));
      await create(api, 'assets', { asset_no: 'plain' });
      marked = await create(api, 'assets', { asset_no: 'marked', data: { k7777: 1 } });
    });
    after(() => stop(svc));

    /** GET assets/data.k<i>=1 for every i in [from, to): each a shape of its own. */
    async function flood(from: number, to: number): Promise<void> {
      let next = from;
      const worker = async () => {
        for (let i = next++; i < to; i = next++) {
          const ids = expectOk<Asset[]>(await api.get(`/3.0/assets/data.k${i}=1`)).map((r: { id: number }) => r.id);
          assert.deepEqual(ids, i === 7777 ? [marked] : []);
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
    }

    it(`${SHAPES} distinct filter shapes leave the cache at its bound and memory flat`, async () => {
      const { statements } = svc.database;
      const missesBefore = statements.stats().misses;
      await flood(0, 2_000);
      const early = await settledMemory();
      assert.equal(statements.stats().size, statements.max);
      await flood(2_000, SHAPES);
      const late = await settledMemory();
      const stats = statements.stats();
      assert.equal(stats.size, statements.max);
      // Every shape was compiled (each GET is a count), none kept past the bound.
      assert.ok(stats.misses - missesBefore >= SHAPES, `${stats.misses - missesBefore} statements compiled`);
      const grown = (late.heapUsed - early.heapUsed) / MiB;
      assert.ok(grown < 8, `heap grew ${grown.toFixed(1)} MiB over ${SHAPES - 2_000} more shapes`);
      // A common shape still answers (and is compiled again or found).
      assert.deepEqual(expectOk<Asset[]>(await api.get('/3.0/assets/asset_no=plain')).length, 1);
    });
  });
}
