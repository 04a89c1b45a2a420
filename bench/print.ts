// The printed list step: PRINT_ROWS assets (BENCH_PRINT_ROWS, default 20,800) in one
// company, seeded into a store of their own (.bench/print on SQLite, its own
// database on PostgreSQL), about half of them overdue. The overdue list —
// `GET /3.0/assets/next_check<TODAY` — is asked for twice, each time from a fresh
// server while measure.ts watches its memory: once as CSV, once as the printed PDF
// (about 10,000 rows each), so the two are compared on the same filter and store.
import { rmSync } from 'node:fs';
import { type Engine, PRINT_DIR, PRINT_PG_DATABASE, PRINT_ROWS, TLS_FILES, WITH_PG } from './config.ts';
import { measureServer, type Row } from './measure.ts';
import type { PrintJob } from './print-client.ts';
import { createPgDatabase, dropPgDatabase, engineLabel, seed } from './setup.ts';
import { announce, service } from './workloads.ts';

export interface PrintRun {
  readonly engine: Engine;
  readonly rows: number;
  readonly csv: Row;
  readonly pdf: Row;
}

async function runOn(engine: Engine, certPem: string, today: string): Promise<PrintRun> {
  rmSync(PRINT_DIR, { recursive: true, force: true });
  const url = engine === 'postgres' ? await createPgDatabase(PRINT_PG_DATABASE) : undefined;
  try {
    const summary = await seed(engine, url, certPem, today, { dataDir: PRINT_DIR, assets: PRINT_ROWS, companies: 1 });
    const rows = summary.overdueInScope;
    const path = `/3.0/assets/next_check<${today}`;
    const measure = (accept: PrintJob['accept'], what: string) => measureServer(
      announce(`${what}, ${engineLabel(engine)}`, `one request, GET ${path} with Accept: ${accept}, ${rows} rows expected`),
      service({ url, dataDir: PRINT_DIR }),
      {
        script: 'bench/print-client.ts',
        job: (port): PrintJob => ({ origin: `https://127.0.0.1:${port}`, path, certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey, accept, rows }),
      },
    );
    return { engine, rows, csv: await measure('text/csv', 'CSV export of the overdue list'), pdf: await measure('application/pdf', 'Printed overdue list') };
  } finally {
    if (engine === 'postgres') await dropPgDatabase(PRINT_PG_DATABASE);
  }
}

/** The step on SQLite and, with BENCH_PG=1, on PostgreSQL. */
export async function runPrinted(certPem: string, today: string): Promise<PrintRun[]> {
  const runs = [await runOn('sqlite', certPem, today)];
  if (WITH_PG) runs.push(await runOn('postgres', certPem, today));
  return runs;
}
