// A real streaming replica of the test PostgreSQL: the one CI made (TEST_PG_REPLICA_URL,
// or one deploy/pg-replica.sh reports running), or one made here with that script and
// removed again by release(). Null (with a notice) where none can be made — the script
// needs root and Debian's PostgreSQL tools — unless REQUIRE_REPLICA=1.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { PG_ADMIN_URL } from './templates.ts';
import { ROOT } from './root.ts';

const run = promisify(execFile);
const SCRIPT = join(ROOT, 'deploy', 'pg-replica.sh');

export interface TestReplica {
  /** The replica's URL for one database of the primary (as the test user). */
  url(database: string): string;
  /** Runs a statement on the replica (as the test user, who is a superuser). */
  query<R>(text: string): Promise<R[]>;
  /** Stops and starts the replica's server (a local cluster made by the script: `controllable`). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Whether it was made here (and so is removed by release). */
  readonly owned: boolean;
  /** Whether it is this machine's cluster made by deploy/pg-replica.sh, which the tests may stop and start. */
  readonly controllable: boolean;
  release(): Promise<void>;
}

async function script(command: string): Promise<string | null> {
  try {
    return (await run('bash', [SCRIPT, command], { timeout: 180_000 })).stdout.trim();
  } catch {
    return null;
  }
}

export async function useReplica(): Promise<TestReplica | null> {
  const local = await script('status');
  let base = process.env.TEST_PG_REPLICA_URL ?? local;
  let owned = false;
  if (!base) {
    base = await script('create');
    owned = base !== null;
  }
  if (!base) {
    const notice = 'no read replica could be made (deploy/pg-replica.sh create needs root and PostgreSQL\'s cluster tools): the replica tests are SKIPPED';
    if (process.env.REQUIRE_REPLICA === '1') throw new Error(notice);
    process.emitWarning(notice);
    return null;
  }
  const where = new URL(base);
  const url = (database: string) => {
    const u = new URL(PG_ADMIN_URL);
    u.host = where.host;
    u.pathname = `/${database}`;
    return u.toString();
  };
  const cluster = (action: string) => run('pg_ctlcluster', ['--skip-systemctl-redirect', process.env.PG_VERSION ?? '15', 'replica', action]);
  return {
    url,
    owned,
    controllable: owned || local !== null,
    async query<R>(text: string) {
      const client = new pg.Client({ connectionString: url('postgres'), connectionTimeoutMillis: 2000 });
      await client.connect();
      try {
        return (await client.query(text)).rows as R[];
      } finally {
        await client.end();
      }
    },
    async stop() { await cluster('stop'); },
    async start() { await cluster('start'); },
    async release() {
      if (owned) await script('remove');
    },
  };
}
