// W7 and its baseline on one store: the service answering `PUT /3.0/assets` with
// 1,000 new assets per request (sequential.ts: warm-ups, then iterations one after
// another on one keep-alive connection, each answer checked: 201, records_inserted
// 1000, 1,000 ids), and just before it the bare INSERT of the same rows into
// bare_assets with their audit rows (bare-insert.ts). Measured on an empty store and
// on the BENCH_ROWS-asset store: the service's PUT must not grow with the table.
import type { BareInsertJob } from './bare-insert.ts';
import { INSERT_ITERATIONS, INSERT_ROWS, INSERT_WARMUPS, TLS_FILES } from './config.ts';
import { measureDirect, measureServer, type Row } from './measure.ts';
import type { NewAssetsSpec } from './new-assets.ts';
import type { SequentialJob } from './sequential.ts';
import { engineLabel } from './setup.ts';
import { announce, auditSource, type Seeded, service, sqliteFile } from './workloads.ts';

export interface InsertRun {
  /** Assets in the store before the first request. */
  readonly storeAssets: number;
  readonly bare: Row;
  readonly w7: Row;
}

/** New assets in the certificate's company, `count` per batch. */
export const newAssetsOf = (t: Seeded, prefix: string, count: number): NewAssetsSpec => ({
  prefix, count, companyId: t.summary.companies[0]!.id, locations: t.summary.places.locations, departments: t.summary.places.departments,
  today: t.today,
});

export async function runInserts(t: Seeded): Promise<InsertRun> {
  const db = engineLabel(t.engine);
  const size = t.summary.assetsTotal;
  const assets = newAssetsOf(t, 'W7', INSERT_ROWS);
  const runs = `${INSERT_WARMUPS} warm-ups + ${INSERT_ITERATIONS}`;
  const job: BareInsertJob = {
    databaseUrl: t.url, sqliteFile: sqliteFile(t), assets, warmups: INSERT_WARMUPS, iterations: INSERT_ITERATIONS, audit: auditSource(t),
  };
  const bare = await measureDirect(announce(`bare INSERT at ${size} assets, ${db}`,
    `${runs} transactions of one INSERT of ${INSERT_ROWS} rows into bare_assets and one of their audit rows, no HTTP`), 'bench/bare-insert.ts', job);
  const w7 = await measureServer(announce(`W7 at ${size} assets, ${db}`,
    `${runs} requests one after another on one connection, PUT /3.0/assets with ${INSERT_ROWS} new assets each`), service(t), {
    script: 'bench/sequential.ts',
    job: (port): SequentialJob => ({
      origin: `https://127.0.0.1:${port}`, method: 'PUT', path: '/3.0/assets', bodies: { kind: 'assets', format: 'json', assets },
      status: 201, warmups: INSERT_WARMUPS, iterations: INSERT_ITERATIONS, certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey,
      check: { kind: 'inserted', records: INSERT_ROWS },
    }),
  });
  return { storeAssets: size, bare, w7 };
}
