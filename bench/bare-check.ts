// Baseline "bare check" beside W8 (pinned by measure.ts to the server's core): what a
// transaction written by hand needs to record W8's check on the bare tables
// (bare-tables.ts), with prepared statements (bare-db.ts), timed directly, no HTTP:
// each standard's latest check on or before the day (it must be in calibration), the
// asset read (locked on PostgreSQL), the check's INSERT, the asset's UPDATE (last
// check, next check, last result, modified, version), one INSERT of its 2 link rows
// and one of the 2 audit rows (the check's create, the asset's update) — the
// service's content. Its points are given as stored (no verdicts worked out here).
// The bodies alternate as W8's do. Reads its job as JSON from argv[2]; prints as timed.ts.
import { formatDatetime } from '../src/model/dates.ts';
import { openBareDb, type Value } from './bare-db.ts';
import { AUDIT_COLUMNS, type AuditSource, insertText } from './bare-writes.ts';
import { type CheckBodySpec, STANDARDS_PER_CHECK, storedPoints } from './check-bodies.ts';
import { timeSteps } from './timed.ts';

export interface BareCheckJob {
  readonly databaseUrl: string | undefined;
  readonly sqliteFile: string;
  readonly check: CheckBodySpec;
  /** The next check each of the two bodies sets. */
  readonly nextChecks: readonly [string, string];
  readonly warmups: number;
  readonly iterations: number;
  readonly audit: AuditSource;
}

const CHECK_COLUMNS = ['company_id', 'asset_id', 'check_type', 'check_date', 'performed_by', 'certificate_no', 'result', 'points', 'standard_ids',
  'file_id', 'next_check', 'data', 'created', 'modified'] as const;
const JSON_COLUMNS = new Set<string>(['points', 'standard_ids', 'data']);
const MOVED = ['last_check', 'next_check', 'last_result'] as const;

const LAST_CHECK = 'SELECT result, next_check FROM bare_assetchecks WHERE asset_id = $1 AND check_date <= $2 ORDER BY check_date DESC, id DESC LIMIT 1';
const ASSET = 'SELECT id, company_id, status, last_check, next_check, period, last_result FROM bare_assets WHERE id = $1';
const INSERT_CHECK = insertText('bare_assetchecks', CHECK_COLUMNS, 1, ' RETURNING id');
const UPDATE_ASSET = 'UPDATE bare_assets SET last_check = $1, next_check = $2, last_result = $3, modified = $4, version = version + 1 WHERE id = $5';
const LINKS = insertText('bare_assetcheck_standards', ['check_id', 'position', 'asset_id'], STANDARDS_PER_CHECK, '');
const AUDIT = insertText('bare_auditlog', AUDIT_COLUMNS, 2, '');

type Row = Record<string, Value>;
const valueJson = (v: Value, json: boolean) => (v === null ? 'null' : json ? String(v) : JSON.stringify(v));
/** A record's members as JSON text, stored JSON inserted as it is. */
const objectJson = (names: readonly string[], row: Row) => `{${names.map((n) => `${JSON.stringify(n)}:${valueJson(row[n] ?? null, JSON_COLUMNS.has(n))}`).join(',')}}`;

async function main(job: BareCheckJob): Promise<void> {
  const db = await openBareDb(job.databaseUrl, job.sqliteFile);
  const lock = db.engine === 'postgres' ? ' FOR UPDATE' : '';
  const bodies = [storedPoints(false), storedPoints(true)];
  const { check: spec, audit } = job;
  try {
    await timeSteps(job.warmups, job.iterations, (i) => {
      const now = formatDatetime(new Date());
      const { json: points, result } = bodies[i % 2]!;
      const next = job.nextChecks[i % 2]!;
      return {
        run: () => db.transaction(async () => {
          for (const standard of spec.standards) {
            const [last] = await db.query<{ result: string; next_check: string | null }>(LAST_CHECK, [standard, spec.today]);
            if (!last || last.result === 'fail' || (last.next_check !== null && last.next_check < spec.today)) return `standard ${standard} not in calibration`;
          }
          const [asset] = await db.query<Row>(ASSET + lock, [spec.assetId]);
          if (!asset) return `asset ${spec.assetId} not found`;
          const check: Row = {
            company_id: asset.company_id!, asset_id: spec.assetId, check_type: 'calibration', check_date: spec.today, performed_by: 'Bench Lab',
            certificate_no: `BENCH-${(i % 2) + 1}`, result, points, standard_ids: JSON.stringify(spec.standards), file_id: null, next_check: next,
            data: null, created: now, modified: now,
          };
          const [inserted] = await db.query<{ id: number }>(INSERT_CHECK, CHECK_COLUMNS.map((c) => check[c]!));
          const id = Number(inserted?.id);
          if (!Number.isInteger(id)) return 'no check id';
          const moved: Row = { last_check: spec.today, next_check: next, last_result: result };
          await db.query(UPDATE_ASSET, [...MOVED.map((c) => moved[c]!), now, spec.assetId]);
          await db.query(LINKS, spec.standards.flatMap((s, position) => [id, position, s]));
          const created = objectJson(['id', ...CHECK_COLUMNS, 'version'], { ...check, id, version: 1 });
          await db.query(AUDIT, [
            spec.assetId, asset.company_id!, null, null, now, `Created assetchecks record ${id}`, '{}', created, 'assetchecks', id, 'create', audit.clientId, audit.ip,
            spec.assetId, asset.company_id!, null, null, now, `Updated assets record ${spec.assetId}`, objectJson(MOVED, asset), objectJson(MOVED, moved),
            'assets', spec.assetId, 'update', audit.clientId, audit.ip,
          ]);
          return null;
        }),
      };
    });
  } finally {
    await db.close();
  }
}

await main(JSON.parse(process.argv[2]!) as BareCheckJob);
