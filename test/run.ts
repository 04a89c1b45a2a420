// `npm test` after the typecheck: every test file (or those named) in node's own runner,
// several files at once (--test-concurrency), each file in a process of its own with its
// own stores, copied from migrated templates made once here (support/templates.ts), its own
// ports and temporary directories. At the end, the slowest files and the run's length.
//
//   node --import tsx test/run.ts [--built] [FILE…]     TEST_CONCURRENCY=N (default: twice the cores)
//
// --built (as `npm test` passes it, right after building): dist/ holds the sources as they
// are, and the CLI processes under test start from it (a third of the CPU of tsx's start).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { makeTemplates } from './support/templates.ts';
import { DB_KINDS } from './support/harness.ts';
import { ROOT } from './support/root.ts';

const SLOWEST = 15;

function allFiles(): string[] {
  const test = join(ROOT, 'test');
  return readdirSync(test, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'support')
    .flatMap((d) => readdirSync(join(test, d.name)).filter((f) => f.endsWith('.test.ts')).map((f) => join('test', d.name, f)))
    .sort();
}

function concurrency(): number {
  const raw = process.env.TEST_CONCURRENCY;
  const n = raw === undefined ? 2 * availableParallelism() : Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`TEST_CONCURRENCY must be a positive integer, not ${raw}`);
  return n;
}

interface FileTime { readonly file: string; readonly ms: number; readonly cpu: number; readonly code: number }

function report(times: readonly FileTime[], wallMs: number, files: number, atOnce: number): void {
  const slowest = [...times].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
  const width = Math.max(...slowest.map((t) => t.file.length));
  const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
  console.log(`\nThe ${slowest.length} slowest test files (each in its own process, start-up included; CPU: its own and its children's):`);
  for (const t of slowest) {
    console.log(`  ${t.file.padEnd(width)} ${seconds(t.ms)} s  CPU ${seconds(t.cpu * 1000)} s${t.code === 0 ? '' : `  (exit ${t.code})`}`);
  }
  const missing = files - times.length;
  console.log(`${files} files in ${seconds(wallMs).trim()} s at ${atOnce} at once; `
    + `the files' own times add up to ${seconds(times.reduce((s, t) => s + t.ms, 0)).trim()} s, `
    + `their CPU to ${seconds(times.reduce((s, t) => s + t.cpu * 1000, 0)).trim()} s`
    + `${missing > 0 ? `; ${missing} file(s) did not report a time (killed or never run)` : ''}`);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const built = args[0] === '--built';
  const named = built ? args.slice(1) : args;
  const files = named.length ? named.map((f) => relative(ROOT, resolve(f))) : allFiles();
  const atOnce = concurrency();
  const started = performance.now();
  const templates = await makeTemplates(DB_KINDS.includes('postgres'));
  const scratch = mkdtempSync(join(tmpdir(), 'asset-tracker-run-'));
  const timesFile = join(scratch, 'times.jsonl');
  try {
    const child = spawn(process.execPath, [
      '--import', 'tsx', '--import', './test/support/file-time.ts', '--import', './test/support/hang-guard.ts',
      // A test without a timeout of its own fails after fifteen minutes instead of holding the run; a file whose tests are done
      // but whose process something still holds open fails a minute later (hang-guard.ts; not --test-force-exit, which can lose verdicts).
      '--test', `--test-concurrency=${atOnce}`, '--test-timeout=900000',
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      ...files,
    ], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...templates.env, TEST_TIMES_FILE: timesFile, ...(built ? { TEST_CLI_BUILT: '1' } : {}) } });
    const code = await new Promise<number>((done) => child.once('close', (c, signal) => done(c ?? (signal ? 1 : 0))));
    let times: FileTime[] = [];
    try {
      times = readFileSync(timesFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as FileTime);
    } catch { /* no file finished */ }
    report(times, performance.now() - started, files.length, atOnce);
    return code;
  } finally {
    await templates.dispose();
    rmSync(scratch, { recursive: true, force: true });
  }
}

process.exitCode = await main();
