// Background work (jobs, webhook delivery) runs on Database.forBackground(), which on
// PostgreSQL holds at most a quarter of the pool's connections at once (at least
// one, always one fewer than the pool): however much background work waits, requests
// find a connection. SQLite's one writer is taken a slice at a time instead.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { DB_KINDS, freshDatabase, type FreshDatabase } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';

/**
 * Starts `n` transactions at once on `database`; each, once it holds a connection, keeps
 * it until `release(most)` holds (`most`: the most that have held one at the same time)
 * or 10 s pass. Waiting on a condition, not on a sleep, the count does not depend on
 * how fast the machine is.
 */
function together(database: Database, n: number, release: (most: number) => boolean): { running(): number; most: Promise<number> } {
  let running = 0;
  let most = 0;
  const all = Promise.all(Array.from({ length: n }, () => database.transaction(async (db) => {
    running++;
    most = Math.max(most, running);
    await sql`SELECT 1`.execute(db);
    await eventually(async () => most, release, 10_000);
    running--;
  })));
  return { running: () => running, most: all.then(() => most) };
}

if (DB_KINDS.includes('postgres')) {
  describe('background work and the pool (postgres)', () => {
    let fresh: FreshDatabase;
    let database: Database;
    before(async () => {
      fresh = await freshDatabase('postgres');
      database = openDatabase({ url: fresh.url, dataDir: '/nonexistent', poolSize: 8 });
    });
    after(async () => {
      await database.close();
      await fresh.drop();
    });

    it('background work holds at most a quarter of the pool while requests use the rest at once', async () => {
      let served = false;
      const background = together(database.forBackground(), 6, () => served);
      assert.equal(await eventually(async () => background.running(), (n) => n === 2), 2, 'background work holds two connections');
      // Requests come while the background's other four transactions wait: all six hold a connection at once.
      const requests = together(database, 6, (most) => most === 6);
      try {
        assert.equal(await requests.most, 6, 'the requests ran together on the other six');
      } finally {
        served = true;
      }
      assert.equal(await background.most, 2, 'two of eight connections for background work');
    });

    it('a pool of one or two keeps one connection for requests', async () => {
      for (const poolSize of [2, 3]) {
        const small = openDatabase({ url: fresh.url, dataDir: '/nonexistent', poolSize });
        let served = false;
        const background = together(small.forBackground(), 3, () => served);
        try {
          assert.equal(await eventually(async () => background.running(), (n) => n === 1), 1);
          assert.equal(await together(small, poolSize - 1, (most) => most === poolSize - 1).most, poolSize - 1);
        } finally {
          served = true;
          assert.equal(await background.most, 1);
          await small.close();
        }
      }
    });
  });
}

describe('background work on SQLite', () => {
  it('shares the one writer, a slice at a time', async () => {
    const fresh = await freshDatabase('sqlite');
    try {
      assert.equal(fresh.database.forBackground(), fresh.database);
    } finally {
      await fresh.drop();
    }
  });
});
