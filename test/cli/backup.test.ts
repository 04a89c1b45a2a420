// `asset-tracker backup` while the service serves and writes, then `restore` into an
// empty store, on both engines: the database comes back as one committed state (assets
// are written in pairs, so a torn copy would show an odd count) with exactly the
// content its files refer to, every file downloaded byte for byte as uploaded; and
// both commands refuse what would lose or mix data, writing nothing.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { TestCert } from '../support/certs.ts';
import type { TestClient } from '../support/client.ts';
import { buildCertificate, buildCompany, startServe, withStore } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { getRaw } from '../support/workflows.ts';
import { expectCliOk as ok, pgAdmin, PG_ADMIN_URL, runCli, show, type Stage, withStage } from '../support/stage.ts';
import type { FileRecord, Inserted } from '../support/api.ts';

const setUp = (stage: Stage): Promise<TestCert> =>
  withStore(stage, async (database) => buildCertificate(database, await buildCompany(database, 'Backed Up'), 'backup-client'));

/** Writes assets one after another until stopped; resolves to how many were written. */
function keepWriting(api: TestClient): { stop(): Promise<number> } {
  let stopped = false;
  let written = 0;
  const loop = (async () => {
    for (let i = 0; !stopped && i < 5000; i++) {
      const r = await api.put('/3.0/assets', [{ asset_no: `W-${i}-a` }, { asset_no: `W-${i}-b` }]);
      assert.equal(r.status, 201, r.text);
      written += 2;
    }
  })();
  return { async stop() { stopped = true; await loop; return written; } };
}

/** Three files with content (two of them the same content, stored once) and one whose content went with its record. */
async function addFiles(api: TestClient): Promise<Map<string, Buffer>> {
  const contents = [Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(70_000, 7)]), Buffer.from('%PDF-1.4\nsecond'), Buffer.from('%PDF-1.4\nsecond')];
  const byToken = new Map<string, Buffer>();
  for (const [i, content] of [...contents, Buffer.from('%PDF-1.4\ngone')].entries()) {
    const asset = await api.put('/3.0/assets', { asset_no: `F-${i}` });
    assert.equal(asset.status, 201, asset.text);
    const file = await api.put('/3.0/files', { asset_id: asset.reply<Inserted>().ids[0], description: `certificate ${i}` });
    assert.equal(file.status, 201, file.text);
    const id = Number(file.reply<Inserted>().ids[0]);
    const listed = await api.get(`/3.0/files/id=${id}`);
    const token = String(listed.reply<FileRecord[]>()[0]!.upload_endpoint).split('/').pop()!;
    const up = await api.request('POST', `/3.0/upload/${token}`, { body: content, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(up.status, 200, up.text);
    if (i < contents.length) byToken.set(token, content);
    else assert.equal((await api.delete(`/3.0/files/id=${id}`)).status, 200);
  }
  return byToken;
}

/** A PostgreSQL database with nothing in it, dropped after `fn`. */
async function withEmptyDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const name = `asset_tracker_restored_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await pgAdmin(`CREATE DATABASE ${name}`);
  try {
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    return await fn(url.toString());
  } finally {
    await pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

/** Serves a restored store: its asset count, and every file's content downloaded. */
async function served(stage: Stage, cert: TestCert, env: Record<string, string>, tokens: readonly string[]): Promise<{ assets: number; files: Buffer[] }> {
  const server = await startServe(stage, { env });
  try {
    const api = server.client(cert);
    const r = await api.get('/3.0/assets');
    api.close();
    assert.equal(r.status, 200, r.text);
    const files: Buffer[] = [];
    for (const token of tokens) {
      const down = await getRaw(server.port, cert, `/3.0/upload/${token}`);
      assert.equal(down.status, 200, down.text);
      files.push(down.raw);
    }
    return { assets: r.envelope.pagination!.total_records, files };
  } finally {
    await server.stop();
  }
}

for (const kind of DB_KINDS) {
  describe(`asset-tracker backup and restore (${kind})`, () => {
    it('while the service serves and writes, backs up the database and its files; restore brings both back into an empty store',
      { timeout: 240_000 }, async () => {
        await withStage(kind, async (stage) => {
          const cert = await setUp(stage);
          // No rate limit: the writer sends as fast as it can.
          const server = await startServe(stage, { env: { RATE_LIMIT: '0' } });
          const out = join(stage.dir, 'backups', 'monday');
          mkdirSync(join(stage.dir, 'backups'));
          let written: number;
          let contents: Map<string, Buffer>;
          try {
            const api = server.client(cert);
            contents = await addFiles(api);
            const writer = keepWriting(api);
            await new Promise((r) => setTimeout(r, 500));
            const printed = JSON.parse(ok(await stage.cli('backup', '--out', out, '--json'))) as Record<string, unknown>;
            assert.deepEqual({ ...printed, databaseBytes: 0 }, { dir: out, engine: kind, databaseBytes: 0, files: 2, fileBytes: 70_009 + 15 });
            assert.ok(Number(printed.databaseBytes) > 0);
            written = await writer.stop();
            api.close();
          } finally {
            await server.stop();
          }
          assert.deepEqual(readdirSync(out).sort(), [kind === 'sqlite' ? 'database.sqlite' : 'database.dump', 'files', 'manifest.json']);

          const dataDir = join(stage.dir, 'restored');
          const restoreInto = async (env: Record<string, string>) => {
            const printed: unknown = JSON.parse(ok(await runCli(['restore', '--from', out, '--json'], stage.env({ DATA_DIR: dataDir, ...env }))));
            assert.deepEqual(printed, { from: out, engine: kind, files: 2, fileBytes: 70_009 + 15 });
            return served(stage, cert, { DATA_DIR: dataDir, ...env }, [...contents.keys()]);
          };
          const back = kind === 'sqlite' ? await restoreInto({}) : await withEmptyDatabase((url) => restoreInto({ DATABASE_URL: url }));
          assert.deepEqual(back.files, [...contents.values()], 'every file byte for byte');
          // One moment's copy: assets come in twos (and four with files), so a torn copy would show an odd count.
          assert.ok(back.assets >= 4 && back.assets <= written + 4 && back.assets % 2 === 0, `restored ${back.assets} of ${written + 4} assets`);
        });
      });
  });
}

describe('asset-tracker backup and restore refusals', () => {
  it('never overwrite or mix: an existing directory, a missing one, no database, no backup, a store not empty, damaged content', { timeout: 120_000 },
    async () => {
      await withStage('sqlite', async (stage) => {
        const none = await stage.cli('backup', '--out', join(stage.dir, 'first'));
        assert.equal(none.code, 1, show(none));
        assert.match(none.stderr, /^error: there is no database at .*asset-tracker\.sqlite\n$/);
        ok(await stage.cli('migrate'));
        const first = join(stage.dir, 'first');
        assert.match(ok(await stage.cli('backup', '--out', first)),
          /^wrote .*first: the SQLite database \(\d+\.\d MiB\) and 0 files' content \(0\.0 MiB\), checked\n$/);
        const again = await stage.cli('backup', '--out', first);
        assert.equal(again.code, 1, show(again));
        assert.match(again.stderr, /^error: .*first already exists: name a new directory\n$/);
        const nowhere = await stage.cli('backup', '--out', join(stage.dir, 'missing', 'copy'));
        assert.equal(nowhere.code, 1, show(nowhere));
        assert.match(nowhere.stderr, /^error: the directory .*missing does not exist\n$/);
        const usage = await stage.cli('backup');
        assert.equal(usage.code, 2, show(usage));
        assert.match(usage.stderr, /^--out is required\nusage: asset-tracker backup --out DIR/);

        // Restore goes into an empty store only: this stage's store already has a database.
        const full = await stage.cli('restore', '--from', first);
        assert.equal(full.code, 1, show(full));
        assert.match(full.stderr, /^error: the database at .*asset-tracker\.sqlite is not empty: restore into an empty store\n$/);
        const empty = { DATA_DIR: join(stage.dir, 'empty') };
        const notBackup = await runCli(['restore', '--from', stage.dir], stage.env(empty));
        assert.equal(notBackup.code, 1, show(notBackup));
        assert.match(notBackup.stderr, /^error: .* holds no backup \(no readable manifest\.json\)\n$/);
        // Damaged content is found before anything is written.
        const manifest = JSON.parse(readFileSync(join(first, 'manifest.json'), 'utf8')) as { files: { id: string; bytes: number }[] };
        const id = 'ab'.repeat(32);
        manifest.files.push({ id, bytes: 3 });
        writeFileSync(join(first, 'manifest.json'), JSON.stringify(manifest));
        mkdirSync(join(first, 'files', 'ab'), { recursive: true });
        writeFileSync(join(first, 'files', 'ab', id), 'bad');
        const damaged = await runCli(['restore', '--from', first], stage.env(empty));
        assert.equal(damaged.code, 1, show(damaged));
        assert.match(damaged.stderr, new RegExp(`^error: .*first: the content ${id} is missing or damaged\n$`));
        assert.equal(existsSync(join(stage.dir, 'empty')), false, 'nothing written');
      });
    });
});
