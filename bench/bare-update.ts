// Baseline "bare UPDATE" (pinned by measure.ts to the server's core): W6's UPDATE of
// ids first..last on bare_assets plus the multi-row INSERT of an audit row per
// changed row into bare_auditlog, in one transaction, timed directly against the
// database, no HTTP (bare-writes.ts); the status alternates so that every run
// really changes the rows. Reads its job as JSON from argv[2]; prints as timed.ts.
import { formatDatetime } from '../src/model/dates.ts';
import { type AuditSource, openBareWriter } from './bare-writes.ts';
import { timeSteps } from './timed.ts';

export interface BareUpdateJob {
  readonly databaseUrl: string | undefined;
  readonly sqliteFile: string;
  readonly first: number;
  readonly last: number;
  readonly statuses: readonly string[];
  readonly warmups: number;
  readonly iterations: number;
  readonly audit: AuditSource;
}

async function main(job: BareUpdateJob): Promise<void> {
  const writer = await openBareWriter(job.databaseUrl, job.sqliteFile, job.audit);
  const expected = job.last - job.first + 1;
  const { statuses } = job;
  try {
    await timeSteps(job.warmups, job.iterations, (i) => {
      // The first run's olddata is a guess: the seeded statuses vary.
      const step = { status: statuses[i % statuses.length]!, previous: statuses[(i + statuses.length - 1) % statuses.length]!,
        modified: formatDatetime(new Date()), first: job.first, last: job.last };
      return {
        run: async () => {
          const changed = await writer.update(step);
          return changed === expected ? null : `changed ${changed} rows, not ${expected}`;
        },
      };
    });
  } finally {
    await writer.close();
  }
}

await main(JSON.parse(process.argv[2]!) as BareUpdateJob);
