// asset-tracker labels rotate: the operator replaces the secret that signs the
// labels' status links in the database every instance reads, so a link signed
// before no longer names its asset, and the secret made after does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assetOfToken, labelSecret, statusToken } from '../../src/admin/labels.ts';
import { DB_KINDS } from '../support/harness.ts';
import { openStageDatabase, show, withStage } from '../support/stage.ts';

for (const kind of DB_KINDS) {
  describe(`asset-tracker labels rotate (${kind})`, () => {
    it('replaces the secret: links signed before name no asset any more, new ones do', async () => {
      await withStage(kind, async (stage) => {
        assert.equal((await stage.cli('migrate')).code, 0);
        const before = await (async () => {
          const database = openStageDatabase(stage);
          try {
            return await labelSecret(database);
          } finally {
            await database.close();
          }
        })();
        const old = statusToken(before, 42);
        assert.equal(assetOfToken(before, old), 42);
        const r = await stage.cli('labels', 'rotate', '--json');
        assert.equal(r.code, 0, show(r));
        assert.match((JSON.parse(r.stdout) as { rotated: string }).rotated, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
        const human = await stage.cli('labels', 'rotate');
        assert.equal(human.code, 0, show(human));
        assert.match(human.stdout, /^replaced the labels' secret at .+ UTC; every label printed before now answers 404\n$/);
        const database = openStageDatabase(stage);
        try {
          const after = await labelSecret(database);
          assert.notDeepEqual(after, before);
          assert.equal(assetOfToken(after, old), null);
          assert.equal(assetOfToken(after, statusToken(after, 42)), 42);
          const rows = await database.db.selectFrom('service_secrets').select('name').execute();
          assert.deepEqual(rows.map((row) => row.name), ['labels']);
        } finally {
          await database.close();
        }
      });
    });
  });
}
