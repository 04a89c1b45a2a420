// Background work (jobs, webhook delivery) runs on Database.forBackground(), which on
// PostgreSQL holds at most a quarter of the pool's connections at once (at least
// one, always one fewer than the pool): however much background work waits, requests
// find a connection. SQLite's one writer is taken a slice at a time instead.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { DB_KINDS, freshDatabase, type FreshDatabase } from '../support/harness.ts';

/** Runs `n` transactions at once on `database`, each holding its connection for `ms`; the most that ran together. */
async function together(database: Database, n: number, ms: number): Promise<number> {
  let running = 0;
  let most = 0;
  await Promise.all(Array.from({ length: n }, () => database.transaction(async (db) => {
    running++;
    most = Math.max(most, running);
    await sql`SELECT pg_sleep(${ms / 1000})`.execute(db);
    running--;
  })));
  return most;
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
      let backgroundDone = false;
      const background = together(database.forBackground(), 6, 300).finally(() => { backgroundDone = true; });
      // Requests start while the background's six transactions wait for their two connections.
      await new Promise((r) => setTimeout(r, 50));
      const requests = await together(database, 6, 100);
      assert.equal(backgroundDone, false, 'the requests did not wait for the background work');
      assert.equal(requests, 6, 'the requests ran together on the other six');
      assert.equal(await background, 2, 'two of eight connections for background work');
    });

    it('a pool of one or two keeps one connection for requests', async () => {
      for (const poolSize of [2, 3]) {
        const small = openDatabase({ url: fresh.url, dataDir: '/nonexistent', poolSize });
        try {
          const background = together(small.forBackground(), 3, 100);
          assert.equal(await together(small, poolSize - 1, 50), poolSize - 1);
          assert.equal(await background, 1);
        } finally {
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
