// Everything `npm run bench` measures on one database, store by store, each store
// seeded straight into the tables (seed.ts) with its bare tables (bare-tables.ts):
//   the workloads' store, BENCH_ROWS assets (and the checks of W8 and W9): W1, W2,
//     W3, W6 and their baselines (workloads.ts), W9 and W8 beside theirs
//     (check-workloads.ts), the stall workload's idle probe and (c), then W7 beside
//     its bare INSERT (inserts.ts);
//   an empty store (the company tree, the certificate, its places, no assets): W7
//     beside its bare INSERT again, right after the full store's;
//   a due store (stall.ts): the stall workload's (a), then (b).
// On PostgreSQL each store is the benchmark database made anew; on SQLite a
// directory of its own under .bench/.
import { rmSync } from 'node:fs';
import { type CheckRun, runCheckWorkloads } from './check-workloads.ts';
import { DUE_DIR, EMPTY_DIR, type Engine, ROWS, say, SQLITE_DIR, STALL_ROWS } from './config.ts';
import { type InsertRun, runInserts } from './inserts.ts';
import type { SeedSummary } from './seed.ts';
import { createPgDatabase, dropPgDatabase, seed, type SeedTarget } from './setup.ts';
import { stallFirstRun, stallIdle, stallImport, stallPosts } from './stall.ts';
import type { StallRow } from './stall-measure.ts';
import { type EngineRun, runWorkloads, type Seeded } from './workloads.ts';

export interface EngineResults {
  readonly engine: Engine;
  readonly main: EngineRun;
  readonly checks: CheckRun;
  readonly inserts: { readonly empty: InsertRun; readonly full: InsertRun };
  readonly stall: { readonly idle: StallRow; readonly firstRun: StallRow; readonly csvImport: StallRow; readonly posts: StallRow };
}

function describeScope(summary: SeedSummary, today: string): void {
  const scope = summary.companies.filter((c) => c.inScope);
  say(`the benchmark certificate (client ${summary.clientId}) belongs to "${scope[0]!.name}": its scope is companies `
    + `${scope.map((c) => `${c.id} ${c.name}`).join(', ')} (${scope.length} of ${summary.companies.length}),`
    + ` ${summary.assetsInScope} of ${summary.assetsTotal} assets (ids ${summary.scopeIds.first}–${summary.scopeIds.last}),`
    + ` ${summary.overdueInScope} with next_check < ${today}`);
}

export async function runEngine(engine: Engine, certPem: string, today: string): Promise<EngineResults> {
  const store = async (target: SeedTarget): Promise<Seeded> => {
    const url = engine === 'postgres' ? await createPgDatabase() : undefined;
    if (engine === 'sqlite') rmSync(target.dataDir, { recursive: true, force: true });
    const summary = await seed(engine, url, certPem, today, target);
    return { engine, url, dataDir: target.dataDir, summary, today };
  };
  try {
    const full = await store({ dataDir: SQLITE_DIR, assets: ROWS, checks: true });
    describeScope(full.summary, today);
    const main = await runWorkloads(full);
    const checks = await runCheckWorkloads(full);
    const idle = await stallIdle(full);
    const posts = await stallPosts(full);
    const insertsFull = await runInserts(full);
    const insertsEmpty = await runInserts(await store({ dataDir: EMPTY_DIR, assets: 0 }));
    const due = await store({ dataDir: DUE_DIR, assets: STALL_ROWS, due: true });
    const firstRun = await stallFirstRun(due);
    const csvImport = await stallImport(due);
    return { engine, main, checks, inserts: { empty: insertsEmpty, full: insertsFull }, stall: { idle, firstRun, csvImport, posts } };
  } finally {
    if (engine === 'postgres') await dropPgDatabase();
  }
}
