// The event triggers are made after the migrations, from the resource definitions
// (events/triggers.ts), and made again only when the SQL they make changes: a store
// whose triggers are missing or were made by an older version gets this version's,
// and ends with exactly the schema of a store made from scratch; a store that has
// them is left alone; several processes preparing one store at once all succeed.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { eventResources, installEventTriggers } from '../../src/events/triggers.ts';
import { createRegistry } from '../../src/resources/registry.ts';
import { prepareStore } from '../../src/store.ts';
import { DB_KINDS } from '../support/harness.ts';
import { readSchema } from '../support/schema.ts';
import { createStage, type Stage } from '../support/stage.ts';

for (const kind of DB_KINDS) {
  describe(`event triggers, a step after the migrations (${kind})`, () => {
    const stages: Stage[] = [];
    const handles: Database[] = [];
    after(async () => {
      for (const h of handles) await h.close();
      for (const s of stages) await s.dispose();
    });
    async function store(): Promise<{ stage: Stage; database: Database }> {
      const stage = await createStage(kind, 'asset-tracker-triggers-');
      stages.push(stage);
      const database = openDatabase({ url: stage.databaseUrl, dataDir: stage.dataDir, poolSize: 2 });
      handles.push(database);
      return { stage, database };
    }
    const schemaOf = (stage: Stage) => readSchema({ databaseUrl: stage.databaseUrl, dataDir: stage.dataDir });
    const dropTriggers = async (database: Database) => {
      for (const def of eventResources(createRegistry())) {
        for (const what of ['insert', 'update', 'delete']) {
          await sql`DROP TRIGGER IF EXISTS ${sql.id(`events_${def.table}_${what}`)}${kind === 'postgres' ? sql` ON ${sql.table(def.table)}` : sql``}`
            .execute(database.db);
        }
      }
    };

    it('a store without them gets them, the same as a store made from scratch; one with them is left alone', async () => {
      const fresh = await store();
      await prepareStore(fresh.database);
      const reference = await schemaOf(fresh.stage);
      assert.ok(reference.objects.some((o) => o.includes('events_assets_update')), 'the triggers are in the schema');
      assert.equal(await installEventTriggers(fresh.database, createRegistry()), false, 'up to date: nothing made again');

      // A store as an earlier version left it: triggers of another making, and no record of them.
      const old = await store();
      await prepareStore(old.database);
      await dropTriggers(old.database);
      await sql`DELETE FROM schema_parts`.execute(old.database.db);
      assert.notDeepEqual(await schemaOf(old.stage), reference);
      assert.deepEqual(await prepareStore(old.database), [], 'no migration left to apply');
      assert.deepEqual(await schemaOf(old.stage), reference);
      // A PUT's event is written by the triggers made again.
      await sql`INSERT INTO companies (name, created, modified) VALUES ('After', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`.execute(old.database.db);
      const { rows } = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM events WHERE event = 'companies.created'`.execute(old.database.db);
      assert.equal(Number(rows[0]!.n), 1);
    });

    it('several processes preparing one store at once all succeed and make them once', async () => {
      const s = await store();
      const more = [0, 1, 2].map(() => {
        const d = openDatabase({ url: s.stage.databaseUrl, dataDir: s.stage.dataDir, poolSize: 2 });
        handles.push(d);
        return d;
      });
      await Promise.all([s.database, ...more].map((d) => prepareStore(d)));
      const fresh = await store();
      await prepareStore(fresh.database);
      assert.deepEqual(await schemaOf(s.stage), await schemaOf(fresh.stage));
      const installed = await Promise.all([s.database, ...more].map((d) => installEventTriggers(d, createRegistry())));
      assert.deepEqual(installed, [false, false, false, false]);
    });
  });
}
