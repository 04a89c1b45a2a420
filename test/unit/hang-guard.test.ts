// test/support/hang-guard.ts, which test/run.ts preloads into every test file: a file
// whose tests pass but whose process a leftover server holds open fails, saying what
// holds it; a file that ends by itself passes, with every verdict counted.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT } from '../support/stage.ts';

const dir = mkdtempSync(join(tmpdir(), 'hang-guard-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** This process's environment without the mark node's runner sets in a test file's process (a runner started with it runs nothing). */
const { NODE_TEST_CONTEXT: _context, ...ENV } = process.env;

function runFile(name: string, body: string, graceMs = 300): { status: number | null; out: string } {
  const file = join(dir, name);
  writeFileSync(file, `import { it } from 'node:test';\nimport { createServer } from 'node:net';\n${body}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', join(ROOT, 'test/support/hang-guard.ts'), '--test', '--test-reporter=spec', file],
    { cwd: ROOT, encoding: 'utf8', env: { ...ENV, HANG_GRACE_MS: String(graceMs) }, timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('the hang guard', () => {
  it('fails a file whose process a server it left open holds, and names what holds it', () => {
    const r = runFile('held.test.mjs', "it('passes, leaving a server open', () => { createServer().listen(0, '127.0.0.1'); });");
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /held\.test\.mjs: still running 0\.3 s after its tests ended, held open by: .*TCPServerWrap/);
    assert.match(r.out, /✔ passes, leaving a server open/);
  });

  it('lets a file that ends by itself pass with every verdict', () => {
    const tests = Array.from({ length: 200 }, (_, i) => `it('t${i}', () => {});`).join('\n');
    // A grace a loaded machine cannot overrun on the way out: this file must end by itself.
    const r = runFile('clean.test.mjs', tests, 10_000);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /ℹ tests 200\n/);
    assert.doesNotMatch(r.out, /still running/);
  });
});
