// A write transaction's reads before its first write run on the request thread's
// reader connection (src/db/sqlite-inline-read.ts), without a message to the writer
// thread; from the first write on, and for big or non-plain reads, the writer thread
// answers. Either way a read sees what the writer would.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Database, Db } from '../../src/db/database.ts';
import { INLINE_ROWS } from '../../src/db/sqlite-inline-read.ts';
import { freshDatabase, type FreshDatabase } from '../support/harness.ts';

describe('reads before the first write of a transaction (sqlite)', () => {
  let store: FreshDatabase;
  let other: Database;
  /** The statements sent to the writer thread since the last reset. */
  let sent: string[] = [];
  const observe = (message: unknown) => {
    const m = message as { sql?: string };
    if (m.sql !== undefined) sent.push(m.sql.trim().split(/\s+/, 1)[0]!.toUpperCase());
  };

  before(async () => {
    store = await freshDatabase('sqlite');
    other = store.reopen();
    subscribe('asset-tracker:sqlite-writer', observe);
  });
  after(async () => {
    unsubscribe('asset-tracker:sqlite-writer', observe);
    await other.close();
    await store.drop();
  });
  beforeEach(() => { sent = []; });

  const count = async (db: Db) => (await sql<{ n: number }>`SELECT count(*) AS n FROM companies`.execute(db)).rows[0]!.n;
  const addCompany = (db: Db, name: string) => sql`INSERT INTO companies (name, created, modified)
    VALUES (${name}, '2026-01-01', '2026-01-01 00:00:00')`.execute(db);

  it('a read before any write is answered here and sees what was committed before the lock, by any connection', async () => {
    const before = await count(store.database.db);
    await other.transaction((db) => addCompany(db, 'Committed elsewhere'));
    sent = [];
    const seen = await store.database.transaction((db) => count(db));
    assert.equal(seen, before + 1);
    assert.deepEqual(sent, ['BEGIN', 'COMMIT']);
  });

  it('after the first write, reads go to the writer and see the write', async () => {
    const before = await count(store.database.db);
    sent = [];
    const [first, second] = await store.database.transaction(async (db) => {
      const first = await count(db);
      await addCompany(db, 'Written in the transaction');
      return [first, await count(db)];
    });
    assert.deepEqual([first, second], [before, before + 1]);
    assert.deepEqual(sent, ['BEGIN', 'INSERT', 'SELECT', 'COMMIT']);
  });

  it('a read of more rows than the limit is handed to the writer whole', async () => {
    const rows = await store.database.transaction(async (db) => (await sql<{ value: number }>`WITH RECURSIVE n(value) AS
      (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < ${INLINE_ROWS + 1}) SELECT value FROM n`.execute(db)).rows);
    assert.equal(rows.length, INLINE_ROWS + 1);
    assert.equal(rows.at(-1)!.value, INLINE_ROWS + 1);
    assert.deepEqual(sent, ['BEGIN', 'WITH', 'COMMIT']);
  });

  it('a statement that is not a plain read, and any read outside a locked transaction, goes to the writer', async () => {
    await store.database.db.connection().execute(async (conn) => {
      await sql`BEGIN`.execute(conn);
      await count(conn);
      await sql`COMMIT`.execute(conn);
    });
    await store.database.transaction(async (db) => {
      await sql`PRAGMA foreign_key_check`.execute(db);
    });
    assert.deepEqual(sent, ['BEGIN', 'SELECT', 'COMMIT', 'BEGIN', 'PRAGMA', 'COMMIT']);
  });

  it('a failed read inside the transaction fails as the writer says, and rolls back', async () => {
    const before = await count(store.database.db);
    sent = [];
    await assert.rejects(store.database.transaction(async (db) => {
      await sql`SELECT no_such_column FROM companies`.execute(db);
    }), /no such column: no_such_column/);
    assert.equal(await count(store.database.db), before);
    assert.deepEqual(sent.slice(0, 3), ['BEGIN', 'SELECT', 'ROLLBACK']);
  });
});
