// The CSV export step: BENCH_EXPORT_ROWS assets (default 1,000,000) in one company,
// seeded into a store of their own under .bench/export (the workloads' store stays
// as W6 left it), then streamed by the service as one `GET /3.0/assets` with
// `Accept: text/csv` while measure.ts watches the server's memory: the export must
// stream, its peak RSS staying under TARGETS.rssMiB.
import { rmSync } from 'node:fs';
import { EXPORT_DIR, EXPORT_ROWS, TLS_FILES } from './config.ts';
import type { ExportJob } from './export-client.ts';
import { measureServer, type Row } from './measure.ts';
import { seed } from './setup.ts';
import { announce, service } from './workloads.ts';

const PATH = '/3.0/assets';

/**
 * The export's columns for the seeded assets (src/engine/csv.ts): own fields in GET
 * order without `data`, the keys of `data` the seed writes (sorted), the embeds.
 * No seeded value holds a quote, comma or line break, but export-client.ts counts
 * records by RFC 4180 all the same.
 */
const HEADER = 'id,company_id,asset_no,serial_no,description,status,next_check,last_check,last_result,period,location_id,department_id,'
  + 'external_type_id,date_added,modified,version,data.costcode,data.manufacturer,data.model,data.room,'
  + 'company.name,location.description,department.description,externaltype.description';

export async function runExport(certPem: string, today: string): Promise<Row> {
  // Seeding adds companies and assets: start from an empty store, whatever an earlier run left.
  rmSync(EXPORT_DIR, { recursive: true, force: true });
  const summary = await seed('sqlite', undefined, certPem, today, { dataDir: EXPORT_DIR, assets: EXPORT_ROWS, companies: 1 });
  if (summary.assetsInScope !== EXPORT_ROWS) throw new Error(`the client's scope holds ${summary.assetsInScope} assets, not ${EXPORT_ROWS}`);
  return measureServer(
    announce('CSV export, SQLite', `one request, GET ${PATH} with Accept: text/csv, ${EXPORT_ROWS} rows expected`),
    service({ url: undefined, dataDir: EXPORT_DIR }),
    {
      script: 'bench/export-client.ts',
      job: (port): ExportJob => ({
        origin: `https://127.0.0.1:${port}`, path: PATH, certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey, header: HEADER, rows: EXPORT_ROWS,
      }),
    },
  );
}
