// `company set --logo FILE --subdomain NAME`: the operator gives a company its look on
// the portal. A PNG or JPEG of at most 1 MiB becomes the company's logo; a subdomain is
// one DNS label held by one company (case aside); refusals are readable, change
// nothing; the audit entry notes the logo's size, not its bytes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildCompany, withStore } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { show, withDatabase, withStage } from '../support/stage.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

for (const kind of DB_KINDS) {
  describe(`asset-tracker company set --logo --subdomain (${kind})`, () => {
    it('stores a PNG logo and a subdomain, refuses what is no image, too big, taken or no label; audited without the bytes', { timeout: 120_000 },
      async () => {
        await withStage(kind, async (stage) => {
          await withStore(stage, async (database) => {
            await buildCompany(database, 'Acme');
            await buildCompany(database, 'Other');
          });
          const logo = join(stage.dir, 'logo.png');
          writeFileSync(logo, PNG);
          const set = await stage.cli('company', 'set', '1', '--logo', logo, '--subdomain', 'acme', '--json');
          assert.equal(set.code, 0, show(set));
          assert.deepEqual((JSON.parse(set.stdout) as { changed: string[] }).changed, ['logo', 'subdomain']);
          const text = join(stage.dir, 'logo.txt');
          writeFileSync(text, 'not an image');
          const big = join(stage.dir, 'big.png');
          writeFileSync(big, Buffer.concat([PNG, Buffer.alloc(1024 * 1024)]));
          for (const [args, message] of [
            [['--logo', text], /a logo must be a PNG or JPEG file of at most 1048576 bytes/],
            [['--logo', big], /a logo must be a PNG or JPEG file of at most 1048576 bytes/],
            [['--subdomain', 'ACME'], /a subdomain needs 1 to 63 lower-case letters, digits and hyphens/],
            [['--subdomain', 'a.b'], /a subdomain needs 1 to 63 lower-case letters, digits and hyphens/],
          ] as const) {
            const r = await stage.cli('company', 'set', '2', ...args);
            assert.notEqual(r.code, 0, show(r));
            assert.match(r.stderr, message, show(r));
          }
          const taken = await stage.cli('company', 'set', '2', '--subdomain', 'acme');
          assert.match(taken.stderr, /the subdomain acme is company 1's/, show(taken));
          const rows = await withDatabase(stage, (db) => db.selectFrom('companies').select(['id', 'logo', 'subdomain']).orderBy('id').execute());
          assert.deepEqual(rows.map((r) => [Number(r.id), r.logo, r.subdomain]),
            [[1, `data:image/png;base64,${PNG.toString('base64')}`, 'acme'], [2, null, null]]);
          const audit = await withDatabase(stage, (db) => db.selectFrom('auditlog').select(['newdata']).where('endpoint', '=', 'companies')
            .where('action', '=', 'update').execute());
          assert.equal(audit.length, 1);
          assert.match(String(audit[0]!.newdata), /"logo":\s*"\(an image, \d+ characters of data URL\)"/);
          assert.ok(!String(audit[0]!.newdata).includes('base64'));
          const removed = await stage.cli('company', 'set', '1', '--logo', 'none', '--subdomain', 'none', '--json');
          assert.deepEqual((JSON.parse(removed.stdout) as { changed: string[] }).changed, ['logo', 'subdomain']);
        });
      });
  });
}
