// asset-tracker import|export ENDPOINT --company ID: the operator's
// CSV import and export, the same as the API's, for a company's tree.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildCompany, withStore } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { cliArgv, ROOT, show, type Stage, withStage } from '../support/stage.ts';
import type { Inserted } from '../support/api.ts';

const quoted = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Runs the CLI on a terminal (script(1) gives it one), stdout to `out`; returns what the terminal showed. */
async function onTerminal(stage: Stage, args: readonly string[], out: string): Promise<string> {
  const line = [process.execPath, ...cliArgv(args)].map(quoted).join(' ');
  const { stdout } = await promisify(execFile)('script', ['-qefc', `${line} > ${quoted(out)}`, '/dev/null'],
    { cwd: ROOT, env: stage.env(), timeout: 60_000 });
  return stdout;
}

for (const kind of DB_KINDS) {
  describe(`asset-tracker import / export (${kind})`, () => {
    it('imports a file in one go (or checks it only), lists every bad row, and exports what it made', async () => {
      await withStage(kind, async (stage) => {
        const [top, other] = await withStore(stage, async (database) => [await buildCompany(database, 'Top'), await buildCompany(database, 'Other')]);
        const good = join(stage.dir, 'good.csv');
        writeFileSync(good, 'asset_no,description,data.room\r\nA-1,"Scale, 5 kg",Lab 1\r\nA-2,"Said ""hi""",\r\n');
        const dry = await stage.cli('import', 'assets', '--company', String(top), good, '--dry-run', '--json');
        assert.equal(dry.code, 0, show(dry));
        assert.deepEqual(JSON.parse(dry.stdout), { records_valid: 2 });
        const made = await stage.cli('import', 'assets', '--company', String(top), good, '--json');
        assert.equal(made.code, 0, show(made));
        assert.equal((JSON.parse(made.stdout) as Inserted).records_inserted, 2);
        assert.equal(made.stderr, '', 'no progress bar into a pipe');
        const bad = join(stage.dir, 'bad.csv');
        writeFileSync(bad, 'asset_no,period\r\nA-1,1\r\nB-2,soon\r\n');
        const refused = await stage.cli('import', 'assets', '--company', String(top), bad);
        assert.equal(refused.code, 1, show(refused));
        assert.equal(refused.stderr, 'error: Invalid rows in CSV: 2\n  row 1, asset_no: Data Error: assets asset_no "A-1" is already in use\n'
          + '  row 2, period: Field verification failed, invalid value for period\n');
        const out = await stage.cli('export', 'assets', '--company', String(top));
        assert.equal(out.code, 0, show(out));
        assert.equal(out.stderr, '', 'no progress bar into a pipe');
        const lines = out.stdout.split('\r\n');
        assert.match(lines[0]!, /^id,company_id,asset_no,.*,modified,version,data\.room,company\.name,location\.description,department\.description,externaltype\.description$/);
        assert.deepEqual(lines.slice(1, 3).map((l) => l.split(',')[2]), ['A-1', 'A-2']);
        assert.ok(lines[1]!.includes('"Scale, 5 kg"') && lines[1]!.includes(',Lab 1,Top,'), lines[1]);
        assert.equal(lines.length, 4, 'two records and the final CRLF');
        const none = await stage.cli('export', 'assets', '--company', String(other));
        assert.equal(none.stdout.split('\r\n').length, 2, 'the other company sees only the header');
        const nowhere = await stage.cli('export', 'nosuch', '--company', String(top));
        assert.equal(nowhere.code, 1);
        assert.equal(nowhere.stderr, 'error: Endpoint nosuch does not exist\n');
      });
    });

    it('draws a progress bar on a terminal', async () => {
      await withStage(kind, async (stage) => {
        const top = await withStore(stage, (database) => buildCompany(database, 'Top'));
        const file = join(stage.dir, 'three.csv');
        writeFileSync(file, 'asset_no\r\nT-1\r\nT-2\r\nT-3\r\n');
        const shown = await onTerminal(stage, ['import', 'assets', '--company', String(top), file], join(stage.dir, 'import.out'));
        assert.match(shown, /\rimporting \[#{10}-{20}\] {2}33% 1\/3 rows checked/);
        assert.match(shown, /\rimporting \[#{30}\] 100% 3\/3 rows checked\r?\n/);
        assert.equal(readFileSync(join(stage.dir, 'import.out'), 'utf8'), 'created 3 records\n');
        const csv = join(stage.dir, 'export.csv');
        const exported = await onTerminal(stage, ['export', 'assets', '--company', String(top)], csv);
        assert.match(exported, /^\rexporting \[-{30}\] {3}0% 0\/3 records\rexporting \[#{30}\] 100% 3\/3 records\r?\n$/);
        assert.equal(readFileSync(csv, 'utf8').split('\r\n').length, 5, 'the header, three records and the final CRLF');
      });
    });
  });
}
