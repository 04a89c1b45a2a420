// The migration runner in process, on both engines: a migration and its bookkeeping
// row commit or roll back together (DDL included), and stores that Kysely's Migrator
// migrated (every earlier version) go on from where they are.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, Migrator, sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrate, MIGRATIONS, runMigrations } from '../../src/db/migrate.ts';
import { createRegistry } from '../../src/resources/registry.ts';
import { DB_KINDS, type DbKind } from '../support/harness.ts';
import { readSchema } from '../support/schema.ts';
import { createStage, type Stage } from '../support/stage.ts';

const NAMES = MIGRATIONS.map((m) => m.name);

/** An empty store of the engine, opened as the service opens it. */
async function withEmptyStore(kind: DbKind, fn: (database: Database, stage: Stage) => Promise<void>): Promise<void> {
  const stage = await createStage(kind, 'asset-tracker-migrate-');
  const database = openDatabase({ url: stage.databaseUrl, dataDir: stage.dataDir, poolSize: 2 });
  try {
    await fn(database, stage);
  } finally {
    await database.close();
    await stage.dispose();
  }
}

const untyped = (database: Database) => database.db as unknown as Kysely<unknown>;

async function tableExists(database: Database, kind: DbKind, table: string): Promise<boolean> {
  const { rows } = kind === 'postgres'
    ? await sql`SELECT 1 FROM pg_class WHERE relname = ${table}`.execute(database.db)
    : await sql`SELECT 1 FROM sqlite_master WHERE name = ${table}`.execute(database.db);
  return rows.length > 0;
}

/** The schema of a store migrated by the runner alone, without interruption (per engine). */
const reference = new Map<DbKind, Awaited<ReturnType<typeof readSchema>>>();
async function referenceSchema(kind: DbKind) {
  if (!reference.has(kind)) {
    await withEmptyStore(kind, async (database, stage) => {
      assert.deepEqual(await migrate(database.db), NAMES);
      reference.set(kind, await readSchema(stage));
    });
  }
  return reference.get(kind)!;
}

for (const kind of DB_KINDS) {
  describe(`migration runner (${kind})`, () => {
    it('a migration that fails part-way leaves nothing of itself behind and is not recorded; the next run applies it', async () => {
      await withEmptyStore(kind, async (database) => {
        const failing = {
          name: '0002_fails',
          async up(db: Kysely<unknown>) {
            await db.schema.createTable('half_done').addColumn('id', 'integer').execute();
            await db.schema.createIndex('half_done_id_idx').on('half_done').column('id').execute();
            await sql`INSERT INTO companies (name, created, modified) VALUES ('inside the failed migration', '2026-01-01', '2026-01-01')`.execute(db);
            throw new Error('fails after its DDL');
          },
        };
        await assert.rejects(runMigrations(untyped(database), [MIGRATIONS[0]!, failing]), /fails after its DDL/);
        assert.equal(await tableExists(database, kind, 'half_done'), false, 'the DDL of the failed migration was rolled back');
        assert.equal(await tableExists(database, kind, 'half_done_id_idx'), false);
        assert.equal(await tableExists(database, kind, 'companies'), true, 'the migration before it stays applied');
        assert.deepEqual((await sql`SELECT name FROM companies`.execute(database.db)).rows, []);
        assert.deepEqual((await sql`SELECT name FROM kysely_migration ORDER BY name`.execute(database.db)).rows, [{ name: '0001_initial' }]);

        const fixed = { name: '0002_fails', up: (db: Kysely<unknown>) => db.schema.createTable('half_done').addColumn('id', 'integer').execute() };
        assert.deepEqual(await runMigrations(untyped(database), [MIGRATIONS[0]!, fixed]), ['0002_fails']);
        assert.equal(await tableExists(database, kind, 'half_done'), true);
        assert.deepEqual(await runMigrations(untyped(database), [MIGRATIONS[0]!, fixed]), []);
      });
    });

    for (const done of [3, MIGRATIONS.length]) {
      it(`a store Kysely's Migrator took to ${NAMES[done - 1]} (earlier versions) goes on from there`, async () => {
        const expected = await referenceSchema(kind);
        await withEmptyStore(kind, async (database, stage) => {
          const earlier = Object.fromEntries(MIGRATIONS.slice(0, done).map((m) => [m.name, { up: m.up.bind(m) }]));
          const migrator = new Migrator({ db: untyped(database), provider: { getMigrations: async () => earlier } });
          const { error, results = [] } = await migrator.migrateToLatest();
          assert.equal(error, undefined);
          assert.deepEqual(results.map((r) => r.migrationName), NAMES.slice(0, done));

          assert.deepEqual(await migrate(database.db), NAMES.slice(done), 'only what the earlier version had not applied');
          assert.deepEqual(await migrate(database.db), []);
          const schema = await readSchema(stage);
          assert.deepEqual(schema, expected, 'the same schema as a store the runner migrated from the start');
          // The Migrator's lock table stays as it was (an earlier version may still start on this store).
          assert.deepEqual((await sql`SELECT id, is_locked FROM kysely_migration_lock`.execute(database.db)).rows,
            [{ id: 'migration_lock', is_locked: 0 }]);
        });
      });
    }

    it('every company-scoped table has the (company_id, id) index a walk reads the scope\'s span of ids from (src/engine/list.ts)', async () => {
      await withEmptyStore(kind, async (database) => {
        await migrate(database.db);
        const { rows } = kind === 'postgres'
          ? await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes`.execute(database.db)
          : await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index'`.execute(database.db);
        const names = new Set(rows.map((r) => r.name));
        const scoped = createRegistry().all.filter((d) => d.scopeColumn === 'company_id');
        assert.ok(scoped.length >= 10);
        for (const def of scoped) assert.ok(names.has(`${def.table}_company_id_id_idx`), `${def.name}: ${def.table}_company_id_id_idx`);
      });
    });

    it('a store migrated by a newer version (a migration this one does not know) is refused, and left as it is', async () => {
      await withEmptyStore(kind, async (database) => {
        await migrate(database.db);
        await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_future', ${new Date().toISOString()})`.execute(database.db);
        await assert.rejects(migrate(database.db), /9999_future.*newer version/);
        assert.equal((await sql`SELECT name FROM kysely_migration`.execute(database.db)).rows.length, NAMES.length + 1);
      });
    });
  });
}
