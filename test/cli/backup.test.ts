// `asset-tracker backup` while the service serves and writes: SQLite gets a
// consistent, checked copy through the online backup API; PostgreSQL gets the
// pg_dump command line, which is run here as printed. Either copy must be a
// database another `serve` starts on and answers from.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import BetterSqlite3 from '../../src/db/better-sqlite3.ts';
import { addClient, addCompany } from '../../src/admin/accounts.ts';
import { prepareStore } from '../../src/store.ts';
import { selfSigned, type TestCert } from '../support/certs.ts';
import { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { openStageDatabase, pgAdmin, PG_ADMIN_URL, type Result, Server, show, type Stage, withStage } from '../support/stage.ts';

function ok(r: Result): string {
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stderr, '', show(r));
  return r.stdout;
}

async function setUp(stage: Stage): Promise<TestCert> {
  const cert = selfSigned('backup-client');
  const database = openStageDatabase(stage);
  try {
    await prepareStore(database);
    await addClient(database, { companyId: await addCompany(database, 'Backed Up', null), certPem: cert.certPem });
  } finally {
    await database.close();
  }
  return cert;
}

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

/** Serves the copy (its own DATA_DIR) and counts its assets through the API. */
async function servedAssets(stage: Stage, cert: TestCert, env: Record<string, string>): Promise<number> {
  const dataDir = join(stage.dir, `restored-${Math.random().toString(36).slice(2, 8)}`);
  const server = await Server.start(stage, 'serve', { DATA_DIR: dataDir, ...env });
  try {
    const ca = join(dataDir, 'tls', 'server.pem');
    await server.waitUntilReady(ca);
    const api = new TestClient(server.port, readFileSync(ca, 'utf8'), cert);
    const r = await api.get('/3.0/assets');
    api.close();
    assert.equal(r.status, 200, r.text);
    return r.body.pagination.total_records;
  } finally {
    await server.stop();
  }
}

for (const kind of DB_KINDS) {
  describe(`asset-tracker backup (${kind})`, () => {
    it('while the service serves and writes, makes a copy another serve starts on', { timeout: 240_000 }, async () => {
      await withStage(kind, async (stage) => {
        const cert = await setUp(stage);
        // No rate limit: the writer sends as fast as it can.
        const server = await Server.start(stage, 'serve', { RATE_LIMIT: '0' });
        const out = join(stage.dir, 'backups', kind === 'sqlite' ? 'copy.sqlite' : 'copy.dump');
        mkdirSync(join(stage.dir, 'backups'));
        let copied: number;
        let written: number;
        try {
          const ca = join(stage.dataDir, 'tls', 'server.pem');
          await server.waitUntilReady(ca);
          const api = new TestClient(server.port, readFileSync(ca, 'utf8'), cert);
          const writer = keepWriting(api);
          await new Promise((r) => setTimeout(r, 500));
          const printed = JSON.parse(ok(await stage.cli('backup', '--out', out, '--json')));
          if (kind === 'sqlite') {
            assert.equal(printed.engine, 'sqlite');
            assert.equal(printed.file, out);
            assert.ok(printed.bytes > 0 && printed.pages > 0, JSON.stringify(printed));
          } else {
            assert.equal(printed.engine, 'postgres');
            assert.match(printed.command, /^pg_dump --format=custom --file='[^']+' --dbname='postgres:\/\/[^']+'$/);
            const dumped = spawnSync('sh', ['-c', printed.command], { encoding: 'utf8' });
            assert.equal(dumped.status, 0, dumped.stderr);
          }
          written = await writer.stop();
          api.close();
          assert.ok(existsSync(out));
        } finally {
          await server.stop();
        }

        if (kind === 'sqlite') {
          const copy = new BetterSqlite3(out, { readonly: true });
          assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
          assert.deepEqual(copy.pragma('foreign_key_check'), []);
          copied = Number((copy.prepare('SELECT COUNT(*) AS n FROM assets').get() as { n: number }).n);
          copy.close();
          assert.equal(await servedAssets(stage, cert, { DATABASE_URL: `sqlite:${out}` }), copied);
        } else {
          const name = `asset_tracker_restored_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
          await pgAdmin(`CREATE DATABASE ${name}`);
          try {
            const url = new URL(PG_ADMIN_URL);
            url.pathname = `/${name}`;
            const restored = spawnSync('pg_restore', ['--no-owner', `--dbname=${url}`, out], { encoding: 'utf8' });
            assert.equal(restored.status, 0, restored.stderr);
            copied = await servedAssets(stage, cert, { DATABASE_URL: url.toString() });
          } finally {
            await pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          }
        }
        // A copy of one moment: requests come in twos, so a torn copy would show an odd count.
        assert.ok(copied > 0 && copied <= written && copied % 2 === 0, `copied ${copied} of ${written} assets`);
      });
    });
  });
}

describe('asset-tracker backup refusals', () => {
  it('never overwrites a file, and says so when the directory or the database is missing', { timeout: 120_000 }, async () => {
    await withStage('sqlite', async (stage) => {
      const none = await stage.cli('backup', '--out', join(stage.dir, 'first.sqlite'));
      assert.equal(none.code, 1, show(none));
      assert.match(none.stderr, /^error: there is no database at .*asset-tracker\.sqlite\n$/);
      ok(await stage.cli('migrate'));
      const first = join(stage.dir, 'first.sqlite');
      assert.match(ok(await stage.cli('backup', '--out', first)), /^wrote .*first\.sqlite \(\d+ bytes, integrity checked\)\n$/);
      const again = await stage.cli('backup', '--out', first);
      assert.equal(again.code, 1, show(again));
      assert.match(again.stderr, /^error: .*first\.sqlite already exists: name a new file\n$/);
      const nowhere = await stage.cli('backup', '--out', join(stage.dir, 'missing', 'copy.sqlite'));
      assert.equal(nowhere.code, 1, show(nowhere));
      assert.match(nowhere.stderr, /^error: the directory .*missing does not exist\n$/);
      const usage = await stage.cli('backup');
      assert.equal(usage.code, 2, show(usage));
      assert.match(usage.stderr, /^--out is required\nusage: asset-tracker backup --out FILE/);
    });
  });
});
