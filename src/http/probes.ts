// What a load balancer or an orchestrator asks before it sends traffic: liveness
// (the process answers; it stays ok while the instance shuts down, so nothing
// restarts a process that is only draining) and readiness (the primary database
// answers, every migration of this version is applied, and the instance is not
// shutting down). Served without a client certificate on the API's port and on the
// metrics listener.
import { type Database, ping } from '../db/database.ts';
import { missingMigrations } from '../db/migrate.ts';

export type ProbeBody = { readonly status: 'ok' } | { readonly status: 'unavailable'; readonly reason: string };

export interface ProbeAnswer {
  readonly code: 200 | 503;
  readonly body: ProbeBody;
}

export interface Probes {
  live(): ProbeAnswer;
  ready(): Promise<ProbeAnswer>;
}

/** A readiness check that takes longer than this is a failed one: a balancer must not wait on a database that hangs. */
const READY_TIMEOUT_MS = 2_000;

const OK: ProbeAnswer = { code: 200, body: { status: 'ok' } };
const unavailable = (reason: string): ProbeAnswer => ({ code: 503, body: { status: 'unavailable', reason } });

async function databaseReady(database: Database): Promise<ProbeAnswer> {
  try {
    await ping(database);
  } catch {
    return unavailable('the database does not answer');
  }
  try {
    const missing = await missingMigrations(database.db);
    return missing.length === 0 ? OK : unavailable(`migrations not applied: ${missing.join(', ')}`);
  } catch {
    return unavailable('the database does not answer');
  }
}

export function probes(database: Database, shuttingDown: () => boolean, timeoutMs = READY_TIMEOUT_MS): Probes {
  return {
    live: () => OK,
    async ready() {
      if (shuttingDown()) return unavailable('shutting down');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<ProbeAnswer>((resolve) => {
        timer = setTimeout(() => resolve(unavailable(`the database did not answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        const answer = await Promise.race([databaseReady(database), late]);
        // A shutdown that began while the database was asked wins.
        return shuttingDown() ? unavailable('shutting down') : answer;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
