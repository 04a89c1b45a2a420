// Every command explains itself (`<command> --help`), the executable tells its
// version, and `openapi` prints the API's description — none of them touching the
// database.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { limited, ROOT, show, withStage } from '../support/stage.ts';

/** Commands this suite knows to have a description of their own beyond the usage line. */
const DESCRIBED = ['serve', 'demo', 'migrate', 'company add', 'company set', 'company list', 'cert create', 'client add', 'client list',
  'client revoke', 'user add', 'user list', 'reminders run', 'jobs list', 'jobs run', 'backup', 'restore', 'openapi', 'changes prune',
  'labels rotate'];

describe('asset-tracker --help, --version, openapi', () => {
  it('every command listed by --help answers its own --help on stdout with exit 0', { timeout: 180_000 }, async () => {
    await withStage('sqlite', async (s) => {
      const top = await s.cli('--help');
      assert.equal(top.code, 0, show(top));
      assert.match(top.stdout, /asset-tracker <command> --help/);
      // A command line of the listing: its leading lower-case words.
      const commands = top.stdout.split('\n').slice(1).map((l) => /^ {2}([a-z]+(?: [a-z]+)*)(?: |$)/.exec(l)?.[1]).filter((c): c is string => !!c);
      for (const c of DESCRIBED) assert.ok(commands.includes(c), `--help lists ${c}: ${commands.join(',')}`);
      // The README's command table holds every usage of the listing, as it writes it (without --json).
      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const usages = top.stdout.split('\n').slice(1).map((l) => /^ {2}([a-z][^(]*?)(?: \[--json\])?(?: {3}\(.*\))?$/.exec(l)?.[1])
        .filter((u): u is string => !!u && !u.startsWith('asset-tracker'));
      assert.equal(usages.length, commands.length);
      for (const u of usages) {
        const cell = u.replaceAll('|', '\\|');
        assert.ok(readme.includes(`\`asset-tracker ${cell}\``) || readme.includes(`\`${cell}\``), `the README's CLI table lists ${u}`);
      }
      const results = await limited(3, commands.map((c) => () => s.cli(...c.split(' '), '--help')));
      results.forEach((r, i) => {
        const c = commands[i]!;
        assert.equal(r.code, 0, show(r));
        assert.equal(r.stderr, '', show(r));
        assert.ok(r.stdout.startsWith(`usage: asset-tracker ${c}`), show(r));
        assert.ok(top.stdout.includes(`  ${r.stdout.split('\n')[0]!.slice('usage: asset-tracker '.length)}`), `the same usage as the listing: ${c}`);
        if (DESCRIBED.includes(c)) assert.match(r.stdout, /^usage: [^\n]+\n\n\S[^\n]+/, `${c} describes itself`);
      });
      // -h too, and --help wins over missing arguments.
      const short = await s.cli('client', 'revoke', '-h');
      assert.equal(short.code, 0, show(short));
      assert.match(short.stdout, /^usage: asset-tracker client revoke ID/);
      assert.equal(existsSync(s.dataDir), false, '--help touches no DATA_DIR');
    });
  });

  it('--version prints the package version', async () => {
    await withStage('sqlite', async (s) => {
      const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
      const r = await s.cli('--version');
      assert.equal(r.code, 0, show(r));
      assert.equal(r.stdout, `asset-tracker ${version}\n`);
    });
  });

  it('openapi prints the OpenAPI document, indented or (--json) on one line, without a database', async () => {
    await withStage('sqlite', async (s) => {
      const [pretty, compact] = await limited(2, [() => s.cli('openapi'), () => s.cli('openapi', '--json')]);
      for (const r of [pretty!, compact!]) {
        assert.equal(r.code, 0, show(r));
        assert.equal(r.stderr, '', show(r));
      }
      const doc = JSON.parse(pretty!.stdout) as { openapi?: string; paths?: Record<string, unknown> };
      assert.deepEqual(JSON.parse(compact!.stdout), doc);
      assert.match(String(doc.openapi), /^3\./);
      assert.ok(Object.keys(doc.paths ?? {}).length > 0, 'it describes paths');
      assert.equal(compact!.stdout.trimEnd().includes('\n'), false);
      assert.ok(pretty!.stdout.split('\n').length > 10);
      assert.equal(existsSync(s.dataDir), false, 'openapi touches no DATA_DIR');
    });
  });
});
