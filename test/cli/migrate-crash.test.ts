// `asset-tracker migrate` killed with SIGKILL at random moments, on both engines:
// whatever the moment, the next `migrate` succeeds, the schema it leaves is exactly
// that of a store migrated without interruption, and `serve` starts on it. Several
// `migrate` processes started at once all succeed and apply each migration once.
//
// Each process under test is the real CLI (`node --import tsx src/cli/main.ts migrate`,
// as in cli.test.ts) with one observer preloaded, test/support/sql-trace.js, which
// reports every statement the process runs as it runs it. That tells the test when
// the process starts on the database (the kill delays are counted from there, across
// the measured length of a migrate run) and, after the kill, exactly where the process
// was: before any SQL, inside a migration's transaction, between two, or done and
// closing. Whatever a killed run committed must be exactly what the next run does not
// apply again.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startServe } from '../support/factories.ts';
import { DB_KINDS, type DbKind } from '../support/harness.ts';
import { readSchema, type Schema } from '../support/schema.ts';
import { cliArgv, createStage, ROOT, show, type Result, type Stage } from '../support/stage.ts';

const TRACE = join(ROOT, 'test/support/sql-trace.js');
/** The migrations the code base ships, by file name (as cli.test.ts reads them). */
const MIGRATIONS = readdirSync(join(ROOT, 'src/db/migrations')).filter((f) => /^\d{4}_\w+\.ts$/.test(f)).map((f) => f.slice(0, -3)).sort();
/** Kills per engine, each on a fresh store, and on stores that earlier kills left partly migrated (runs a kill came too late for do not count). */
const FRESH_KILLS = 10;
const CHAIN_KILLS = 10;
/** A chain stops after this many kills on one store and lets the next run finish. */
const KILLS_PER_CHAIN = 4;
/** Processes at once (the machine this was tuned on has 2 cores; each process costs ~0.7 s of CPU to start). */
const LANES = 3;
/** The kill window after the first SQL statement, relative to the database phase of an uninterrupted run. */
const WINDOW = 1.1;
/** Share of kills aimed at the start-up, before the process reaches the database. */
const STARTUP_SHARE = 0.15;
/** Share of the other kills aimed inside one migration's transaction chosen at random (the rest: anywhere in the run). */
const STRATIFIED_SHARE = 0.5;
const CLI_TIMEOUT_MS = 60_000;
const BEGIN = /^sql \d+ (begin|start transaction)\b/i;

// ---------------------------------------------------------------------------------------------
// A traced `migrate` process, SIGKILLed as planned.

const live = new Set<ChildProcess>();
after(() => {
  for (const child of live) child.kill('SIGKILL');
});

/** When to kill: `delayMs` after the spawn, after the process's first SQL statement, or after its `nth` BEGIN (1-based). */
type KillPlan = { readonly from: 'spawn' | 'first-sql'; readonly delayMs: number }
  | { readonly from: 'begin'; readonly nth: number; readonly delayMs: number };

interface Run extends Result {
  /** The SQL trace up to the process's end, and when each line arrived (ms after the spawn). */
  readonly trace: readonly string[];
  readonly arrived: readonly number[];
  /** Spawn → exit (ms). */
  readonly totalMs: number;
  /** When the SIGKILL was sent (ms after the spawn), if it was. */
  readonly killedAtMs: number | null;
}

function runMigrate(stage: Stage, plan: KillPlan | null): Promise<Run> {
  return new Promise((done, fail) => {
    const spawned = performance.now();
    const child = spawn(process.execPath, cliArgv(['migrate', '--json'], [TRACE]),
      { cwd: ROOT, env: { ...stage.env(), SQL_TRACE_FD: '3' }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    live.add(child);
    let stdout = '';
    let stderr = '';
    let partial = '';
    const trace: string[] = [];
    const arrived: number[] = [];
    let reached = false;
    let begins = 0;
    let killedAt: number | null = null;
    const kill = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killedAt = performance.now() - spawned;
      child.kill('SIGKILL');
    };
    const timers = [setTimeout(kill, CLI_TIMEOUT_MS)];
    if (plan?.from === 'spawn') timers.push(setTimeout(kill, plan.delayMs));
    child.stdout!.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
    child.stderr!.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
    const traceStream = child.stdio[3] as NodeJS.ReadableStream;
    traceStream.setEncoding('utf8');
    traceStream.on('data', (s: string) => {
      const lines = (partial + s).split('\n');
      partial = lines.pop()!;
      const now = performance.now() - spawned;
      for (const line of lines) {
        if (!reached && line.startsWith('sql ')) {
          reached = true;
          if (plan?.from === 'first-sql') timers.push(setTimeout(kill, plan.delayMs));
        }
        if (BEGIN.test(line) && ++begins === (plan?.from === 'begin' ? plan.nth : 0)) timers.push(setTimeout(kill, plan!.delayMs));
        trace.push(line);
        arrived.push(now);
      }
    });
    child.once('error', (e) => { timers.forEach(clearTimeout); fail(e); });
    child.once('close', (code, signal) => {
      timers.forEach(clearTimeout);
      live.delete(child);
      done({ code, signal, stdout, stderr, trace, arrived, killedAtMs: killedAt, totalMs: performance.now() - spawned });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Where a process was when it ended, from its trace.

type Where = 'startup' | 'in-transaction' | 'between' | 'closing' | 'finished';

interface Progress {
  /** Bookkeeping rows (kysely_migration) this process surely committed, and how many more it may have (killed during a COMMIT). */
  readonly committed: number;
  readonly uncertain: number;
  readonly inTransaction: boolean;
  readonly sawSql: boolean;
  /** Times (ms after the first SQL statement, as seen here): each BEGIN, each bookkeeping row committed, the last statement completed. */
  readonly beginsMs: readonly number[];
  readonly recordedMs: readonly number[];
  readonly lastMs: number | null;
}

function progressOf(run: Run): Progress {
  let committed = 0;
  let inTransaction = false;
  let records = 0;
  let commit: string | null = null;
  let autocommitted: string | null = null;
  let first: number | null = null;
  const beginsMs: number[] = [];
  let lastMs: number | null = null;
  const recordedMs: number[] = [];
  run.trace.forEach((line, i) => {
    const at = run.arrived[i]!;
    const sqlLine = /^sql (\d+) (.*)$/s.exec(line);
    if (sqlLine) {
      first ??= at;
      const [, n, text] = sqlLine as unknown as [string, string, string];
      if (/^(begin|start transaction)\b/i.test(text)) {
        inTransaction = true;
        records = 0;
        beginsMs.push(at - first);
      } else if (/^insert into "?kysely_migration"? /i.test(text)) {
        if (inTransaction) records++;
        else autocommitted = n; // outside a transaction (as Kysely's Migrator did on SQLite): committed when done
      } else if (/^commit\b/i.test(text)) commit = n;
      else if (/^rollback\b/i.test(text)) { inTransaction = false; commit = null; }
    } else if (line.startsWith('ok ')) {
      lastMs = at - first!;
      if (line === `ok ${commit}`) {
        committed += records;
        for (let r = 0; r < records; r++) recordedMs.push(lastMs);
        inTransaction = false;
        commit = null;
      } else if (line === `ok ${autocommitted}`) {
        committed++;
        recordedMs.push(lastMs);
        autocommitted = null;
      }
    }
  });
  return {
    committed, uncertain: (commit !== null ? records : 0) + (autocommitted !== null ? 1 : 0), inTransaction,
    sawSql: first !== null, beginsMs, recordedMs, lastMs,
  };
}

/** `applied` (a run's --json output) is what was left after `before` migrations, one of [lo, hi]. */
function assertAppliedRest(applied: readonly string[], lo: number, hi: number, context: string): number {
  const k = MIGRATIONS.length - applied.length;
  assert.ok(k >= lo && k <= hi, `expected the migrations after the first ${lo}${hi > lo ? ` or ${hi}` : ''} to be applied, got ${JSON.stringify(applied)}\n${context}`);
  assert.deepEqual(applied, MIGRATIONS.slice(k), context);
  return k;
}

function appliedBy(r: Result): string[] {
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stderr, '', show(r));
  return (JSON.parse(r.stdout) as { applied: string[] }).applied;
}

const describeRun = (r: Run, plan: KillPlan | null) =>
  `plan ${JSON.stringify(plan)}, killed at ${r.killedAtMs?.toFixed(1) ?? '-'} ms\n${show(r)}--- trace (last 12)\n${r.trace.slice(-12).join('\n')}`;

// ---------------------------------------------------------------------------------------------
// The checks after the kills.

/** `serve` starts on the store and answers /healthz and /readyz. */
async function assertServes(stage: Stage): Promise<void> {
  const server = await startServe(stage);
  try {
    const client = server.client();
    try {
      const ready = await client.get('/readyz');
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual(ready.body, { status: 'ok' });
    } finally {
      client.close();
    }
  } finally {
    await server.dispose();
  }
}

/** The next `migrate` after the kills: it succeeds, applies what was not committed, and the schema is complete. */
async function assertRecovers(stage: Stage, lo: number, hi: number, reference: Schema, context: string): Promise<Run> {
  const next = await runMigrate(stage, null);
  assertAppliedRest(appliedBy(next), lo, hi, `${context}\n--- the next migrate\n${show(next)}`);
  assert.deepEqual(await readSchema(stage), reference, `the schema after the kill differs from an uninterrupted one\n${context}`);
  return next;
}

// ---------------------------------------------------------------------------------------------

interface Kill { readonly where: Where; readonly left: number }

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const firstSqlAt = (run: Run) => run.arrived[run.trace.findIndex((l) => l.startsWith('sql '))]!;

/**
 * How long a migrate takes, and when to kill one. The measurement (LANES uninterrupted
 * runs at once) gives the length of the database phase — first SQL statement to last
 * COMMIT — and how long each migration's transaction takes in it; the test's own
 * uninterrupted full runs (the runs after the kills) keep the length up to date under
 * the test's load.
 *
 * A kill is aimed at the start-up (STARTUP_SHARE: before the first SQL statement), or
 * at a uniformly random moment across the whole database phase × WINDOW, or
 * (STRATIFIED_SHARE of the rest) at a uniformly random moment inside one migration's
 * transaction × WINDOW, the migration chosen at random among those left and the delay
 * counted from its BEGIN: the short migrations would otherwise hardly ever be hit.
 */
class Timing {
  private readonly full: number[] = [];
  private readonly starts: number[] = [];
  /** Database phase of a full run (ms). */
  phaseMs: number;
  toFirstSqlMs: number;
  readonly measuredMs: readonly number[];
  /** Fractions of a full run's database phase: where the first BEGIN is, and where each migration's transaction ends. */
  private readonly begin: number;
  private readonly ends: readonly number[];
  /** Each migration's transaction, BEGIN to COMMIT, as a fraction of the database phase. */
  private readonly spans: readonly number[];

  constructor(runs: readonly Run[], readonly reference: Schema) {
    const progress = runs.map(progressOf);
    this.toFirstSqlMs = median(runs.map(firstSqlAt));
    this.measuredMs = progress.map((p) => p.lastMs!);
    this.phaseMs = Math.max(...this.measuredMs);
    this.begin = median(progress.map((p) => (p.beginsMs[0] ?? 0) / p.lastMs!));
    this.ends = MIGRATIONS.map((_, j) => median(progress.map((p) => (p.recordedMs[j] ?? p.lastMs!) / p.lastMs!)));
    this.spans = MIGRATIONS.map((_, j) => median(progress.map((p) =>
      p.recordedMs[j] === undefined || p.beginsMs[j] === undefined ? 1 : (p.recordedMs[j] - p.beginsMs[j]) / p.lastMs!)));
  }

  /** An uninterrupted run; `full` when it applied every migration from the start. */
  observe(run: Run, full: boolean): void {
    this.starts.push(firstSqlAt(run));
    this.toFirstSqlMs = median(this.starts.slice(-5));
    const { lastMs } = progressOf(run);
    if (!full || lastMs === null) return;
    this.full.push(lastMs);
    if (this.full.length >= 3) this.phaseMs = median(this.full.slice(-5));
  }

  /** A kill for a run on a store where the first `applied` migrations are applied. */
  plan(applied = 0): KillPlan {
    if (Math.random() < STARTUP_SHARE) return { from: 'spawn', delayMs: Math.random() * this.toFirstSqlMs };
    if (Math.random() < STRATIFIED_SHARE) {
      const nth = 1 + Math.floor(Math.random() * (MIGRATIONS.length - applied));
      return { from: 'begin', nth, delayMs: Math.random() * WINDOW * this.spans[applied + nth - 1]! * this.phaseMs };
    }
    // That run's database phase: the preamble up to its first BEGIN, then the migrations left.
    const left = 1 - (applied === 0 ? 0 : this.ends[applied - 1]! - this.begin);
    return { from: 'first-sql', delayMs: Math.random() * WINDOW * left * this.phaseMs };
  }

  describe(): string {
    const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
    return `spawn → first SQL ${this.toFirstSqlMs.toFixed(0)} ms (median of the last 5); `
      + `first SQL → last migration committed ${this.measuredMs.map((ms) => ms.toFixed(1)).join(', ')} ms (${this.measuredMs.length} at once; `
      + `first BEGIN at ${pct(this.begin)}, each migration's transaction ${this.spans.map(pct).join(', ')} of it); `
      + `full runs during the kills: median ${this.full.length ? median(this.full).toFixed(1) : '-'} ms (${this.full.length} runs); `
      + `database phase now taken as ${this.phaseMs.toFixed(1)} ms`;
  }
}

async function withStore<T>(kind: DbKind, fn: (stage: Stage) => Promise<T>): Promise<T> {
  const stage = await createStage(kind, 'asset-tracker-kill-');
  try {
    return await fn(stage);
  } finally {
    await stage.dispose();
  }
}

function classify(run: Run, p: Progress, recordedAfter: number): Where {
  if (run.code === 0) return 'finished';
  assert.equal(run.signal, 'SIGKILL', `a migrate that was not killed failed\n${show(run)}`);
  if (!p.sawSql) return 'startup';
  if (p.inTransaction) return 'in-transaction';
  return recordedAfter < MIGRATIONS.length ? 'between' : 'closing';
}

function summary(kills: readonly Kill[]): string {
  const count = (w: Where) => kills.filter((k) => k.where === w).length;
  const where = (['startup', 'in-transaction', 'between', 'closing'] as const).map((w) => `${w} ${count(w)}`).join(', ');
  const left = MIGRATIONS.map((_, i) => kills.filter((k) => k.where !== 'finished' && k.left === MIGRATIONS.length - i).length);
  return `${kills.length - count('finished')} kills (${where}; and ${count('finished')} runs that ended before their kill); `
    + `migrations pending right after the kill (${MIGRATIONS.length}..1): ${left.join('/')}`;
}

for (const kind of DB_KINDS) {
  describe(`migrate killed at random moments (${kind})`, { concurrency: false }, () => {
    let timing: Timing | undefined;
    const kills: Kill[] = [];

    it(`measures a migrate run (${LANES} at once, each on a fresh store) and keeps its schema as the reference`, { timeout: 120_000 }, async (t) => {
      const runs = await Promise.all(Array.from({ length: LANES }, () => withStore(kind, async (stage) => {
        const run = await runMigrate(stage, null);
        assert.deepEqual(appliedBy(run), MIGRATIONS);
        return { run, schema: await readSchema(stage) };
      })));
      for (const { schema } of runs) assert.deepEqual(schema, runs[0]!.schema, 'every uninterrupted run makes the same schema');
      assert.deepEqual(runs[0]!.schema.applied, MIGRATIONS);
      assert.ok(runs[0]!.schema.objects.some((o) => / companies\b/.test(o)));
      timing = new Timing(runs.map((r) => r.run), runs[0]!.schema);
      t.diagnostic(`${kind}: ${timing.describe()}; whole process ${runs.map((r) => r.run.totalMs.toFixed(0)).join(', ')} ms`);
    });

    it(`SIGKILL at a random moment, each on a fresh store (${FRESH_KILLS}+): the next migrate succeeds, the schema is complete, serve starts`, { timeout: 300_000 }, async (t) => {
      assert.ok(timing, 'the measurement ran');
      const m = timing;
      const mine: Kill[] = [];
      let started = 0;
      await Promise.all(Array.from({ length: LANES }, async () => {
        while (started < FRESH_KILLS) {
          const n = started++;
          await withStore(kind, async (stage) => {
            const plan = m.plan();
            const run = await runMigrate(stage, plan);
            const p = progressOf(run);
            const context = describeRun(run, plan);
            const where = classify(run, p, p.committed);
            if (where === 'finished') {
              // Not a kill (one more run instead); it is an uninterrupted run itself.
              started--;
              assertAppliedRest(appliedBy(run), 0, 0, context);
              assert.deepEqual(await readSchema(stage), m.reference);
              m.observe(run, true);
            } else {
              const next = await assertRecovers(stage, p.committed, p.committed + p.uncertain, m.reference, context);
              m.observe(next, p.committed === 0 && p.uncertain === 0);
            }
            if (n % 5 === 0) await assertServes(stage);
            mine.push({ where, left: MIGRATIONS.length - p.committed });
          });
        }
      }));
      kills.push(...mine);
      t.diagnostic(`${kind}, a fresh store each: ${summary(mine)}`);
    });

    it(`SIGKILL again and again on the same store, each run going on from what the last one left (${CHAIN_KILLS}+ kills)`, { timeout: 300_000 }, async (t) => {
      assert.ok(timing, 'the measurement ran');
      const m = timing;
      const mine: Kill[] = [];
      let reserved = 0;
      await Promise.all(Array.from({ length: LANES }, async () => {
        while (reserved < CHAIN_KILLS) {
          reserved++;
          await withStore(kind, async (stage) => {
            let lo = 0;
            let hi = 0;
            let finished = false;
            const history: string[] = [];
            for (let i = 0; ; i++) {
              const plan = m.plan(lo);
              const run = await runMigrate(stage, plan);
              const p = progressOf(run);
              const context = `${history.join('\n')}\n${describeRun(run, plan)}`;
              const where = classify(run, p, lo + p.committed);
              history.push(`run ${i}: ${where}, committed ${p.committed}${p.uncertain ? ` (+${p.uncertain}?)` : ''}, killed at ${run.killedAtMs?.toFixed(1) ?? '-'} ms`);
              mine.push({ where, left: MIGRATIONS.length - lo - p.committed });
              if (where === 'finished') {
                // Not a kill (one more instead), and the uninterrupted run that must succeed.
                reserved--;
                assertAppliedRest(appliedBy(run), lo, hi, context);
                assert.deepEqual(await readSchema(stage), m.reference, `the schema after the kills differs from an uninterrupted one\n${context}`);
                m.observe(run, lo === 0 && hi === 0);
                finished = true;
                break;
              }
              lo += p.committed;
              hi += p.committed + p.uncertain;
              if (lo >= MIGRATIONS.length || i + 1 >= KILLS_PER_CHAIN || reserved >= CHAIN_KILLS) break;
              reserved++;
            }
            if (!finished) m.observe(await assertRecovers(stage, lo, hi, m.reference, history.join('\n')), lo === 0 && hi === 0);
            await assertServes(stage);
          });
        }
      }));
      kills.push(...mine);
      t.diagnostic(`${kind}, the same store again and again: ${summary(mine)}`);
      t.diagnostic(`${kind}, all: ${summary(kills)}; ${m.describe()}`);
      assert.ok(kills.filter((k) => k.where !== 'finished').length >= FRESH_KILLS + CHAIN_KILLS);
      assert.ok(kills.some((k) => k.where === 'in-transaction'), `no kill landed inside a migration's transaction: ${summary(kills)}`);
    });

    it('4 migrate processes started at once on a fresh store all succeed, each migration applied once', { timeout: 120_000 }, async () => {
      assert.ok(timing, 'the measurement ran');
      const m = timing;
      await withStore(kind, async (stage) => {
        const runs = await Promise.all([1, 2, 3, 4].map(() => runMigrate(stage, null)));
        const applied = runs.map(appliedBy);
        assert.deepEqual(applied.flat().sort(), MIGRATIONS, `each migration exactly once across the four: ${JSON.stringify(applied)}`);
        for (const a of applied) assert.deepEqual(a, MIGRATIONS.filter((n) => a.includes(n)), 'each process applied its share in order');
        assert.equal(runs.reduce((n, r) => n + progressOf(r).committed, 0), MIGRATIONS.length, 'one committed transaction per migration');
        const schema = await readSchema(stage);
        assert.deepEqual(schema, m.reference);
      });
    });
  });
}
