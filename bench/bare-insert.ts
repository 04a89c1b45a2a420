// Baseline "bare INSERT" beside W7 (pinned by measure.ts to the server's core): the
// same new assets as W7's PUTs (new-assets.ts), as one multi-row INSERT into
// bare_assets plus their audit rows into bare_auditlog in one transaction, timed
// directly against the database, no HTTP (bare-writes.ts). Each iteration inserts a
// batch of its own. Reads its job as JSON from argv[2]; prints as timed.ts.
import { formatDatetime } from '../src/model/dates.ts';
import { type AuditSource, openBareWriter } from './bare-writes.ts';
import { assetRows, newAssets, type NewAssetsSpec } from './new-assets.ts';
import { timeSteps } from './timed.ts';

export interface BareInsertJob {
  readonly databaseUrl: string | undefined;
  readonly sqliteFile: string;
  readonly assets: NewAssetsSpec;
  readonly warmups: number;
  readonly iterations: number;
  readonly audit: AuditSource;
}

async function main(job: BareInsertJob): Promise<void> {
  const writer = await openBareWriter(job.databaseUrl, job.sqliteFile, job.audit);
  try {
    await timeSteps(job.warmups, job.iterations, (i) => {
      const now = formatDatetime(new Date());
      const rows = assetRows(job.assets, newAssets(job.assets, i), now);
      return {
        run: async () => {
          const ids = await writer.insert(rows, now);
          return ids.length === rows.length && new Set(ids).size === rows.length ? null : `${ids.length} ids for ${rows.length} rows`;
        },
      };
    });
  } finally {
    await writer.close();
  }
}

await main(JSON.parse(process.argv[2]!) as BareInsertJob);
