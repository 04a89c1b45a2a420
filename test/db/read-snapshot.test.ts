// SQLite's reads share one read transaction per turn of the event loop
// (src/db/sqlite.ts). What this process commits is seen by the very next read, in
// the same turn; another connection's commit (a second instance, the operator's CLI)
// from the next turn on, and the data version moves with it.
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/harness.ts';

describe('reads in one turn of the event loop (sqlite)', () => {
  let store: FreshDatabase;
  let other: Database;
  before(async () => {
    store = await freshDatabase('sqlite');
    other = store.reopen();
  });
  after(async () => {
    await other.close();
    await store.drop();
  });

  const names = async (database: Database) => (await database.read<{ name: string }>(
    database.statements.get('test|company-names', () => sql`SELECT name FROM companies ORDER BY id`), {})).map((r) => r.name);
  const addCompany = (database: Database, name: string) => database.transaction((db) => sql`INSERT INTO companies (name, created, modified)
    VALUES (${name}, '2026-01-01', '2026-01-01 00:00:00')`.execute(db));

  it('a commit of this process is seen by the next read of the same turn', async () => {
    const before = await names(store.database);
    await addCompany(store.database, 'Written here');
    assert.deepEqual(await names(store.database), [...before, 'Written here']);
  });

  it("another connection's commit is seen from the next turn on, with a new data version", async () => {
    const before = await names(store.database);
    const version = store.database.dataVersion!();
    await addCompany(other, 'Written elsewhere');
    await nextTurn();
    assert.deepEqual(await names(store.database), [...before, 'Written elsewhere']);
    assert.notEqual(store.database.dataVersion!(), version);
  });
});
