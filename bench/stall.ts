// The stall workload on one engine: a probe (probe.ts: GET /3.0/assets/id=N, 20 per
// second, evenly spaced, one keep-alive connection, timed from when each was due)
// beside each of these, the service started fresh for each part and probed from the
// moment it answers (stall-measure.ts):
//   idle  nothing, IDLE_PROBE_SECONDS on the workloads' store (its first background
//         run, 5 s after start-up, included: it has little to do there);
//   (a)   the first background run over a store of STALL_ROWS assets most of them
//         due, no reminders made yet, a user taking reminders in each company: the
//         probe runs until the reminder job's `job ran` log line;
//   (b)   a CSV import of STALL_ROWS new assets (one PUT, Content-Type: text/csv),
//         on the same store after (a);
//   (c)   W6's 5,000-row POST, one after another for STALL_POST_SECONDS, on the
//         workloads' store.
// For (b) and (c) the window runs from the first request to the last answer.
import type { Check } from './checks.ts';
import { FIRST_RUN_TIMEOUT_SECONDS, IDLE_PROBE_SECONDS, PAGE_SIZE, PROBE_RATE, STALL_POST_SECONDS, STALL_ROWS, TLS_FILES, UPDATE_ROWS } from './config.ts';
import { newAssetsOf } from './inserts.ts';
import type { SequentialJob } from './sequential.ts';
import { engineLabel } from './setup.ts';
import { measureStall, type ProbeTarget, type StallRow } from './stall-measure.ts';
import { announce, type Seeded, service } from './workloads.ts';

/** GET /3.0/assets/id=N of an asset in the middle of the certificate's scope. */
function probeOf(t: Seeded): ProbeTarget {
  const id = t.summary.scopeIds.first + Math.floor(t.summary.assetsInScope / 2);
  const scope = t.summary.companies.filter((c) => c.inScope).map((c) => c.id);
  const check: Check = { kind: 'assets', totalRecords: 1, pageSize: PAGE_SIZE, page: 1, scope, id };
  return { path: `/3.0/assets/id=${id}`, check };
}

/** (c)'s bodies: statuses other than W6's, so that its first request too changes every row. */
const POST_BODIES = { kind: 'given', bodies: ['{"status":"Stall A"}', '{"status":"Stall B"}'] } as const;

const probeText = (t: Seeded) => `probe GET ${probeOf(t).path} at ${PROBE_RATE} req/s from when the service answers`;
/** The service at LOG_LEVEL=info: the reminder job's `job ran` line tells when its first run is over, and how long it took. */
const fresh = (t: Seeded) => service(t, { logLevel: 'info' });

export const stallIdle = (t: Seeded): Promise<StallRow> => measureStall(
  announce(`stall idle, ${engineLabel(t.engine)}`, `${probeText(t)}, ${IDLE_PROBE_SECONDS} s, nothing else`),
  fresh(t), probeOf(t), { kind: 'idle', seconds: IDLE_PROBE_SECONDS });

/** (a): on a store seeded with `due` (setup.ts). */
export function stallFirstRun(t: Seeded): Promise<StallRow> {
  const due = t.summary.dueTotal;
  return measureStall(
    announce(`stall (a), ${engineLabel(t.engine)}`, `${probeText(t)} until the first background run over ${t.summary.assetsTotal} assets (${due} due) is over`),
    fresh(t), probeOf(t),
    { kind: 'first run', timeoutSeconds: FIRST_RUN_TIMEOUT_SECONDS, expected: { created: due, delivered: due, messages: due * t.summary.usersPerCompany } });
}

export function stallImport(t: Seeded): Promise<StallRow> {
  const assets = newAssetsOf(t, 'CSV', STALL_ROWS);
  return measureStall(
    announce(`stall (b), ${engineLabel(t.engine)}`, `${probeText(t)}, during one PUT /3.0/assets of a CSV of ${STALL_ROWS} new assets`),
    fresh(t), probeOf(t), {
      kind: 'worker',
      loader: {
        script: 'bench/sequential.ts',
        job: (port): SequentialJob => ({
          origin: `https://127.0.0.1:${port}`, method: 'PUT', path: '/3.0/assets', bodies: { kind: 'assets', format: 'csv', assets }, status: 201,
          warmups: 0, iterations: 1, certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey, check: { kind: 'inserted', records: STALL_ROWS },
        }),
      },
    });
}

export function stallPosts(t: Seeded): Promise<StallRow> {
  const rows = Math.min(UPDATE_ROWS, t.summary.assetsInScope);
  const { first } = t.summary.scopeIds;
  const path = `/3.0/assets/id+${first}/id-${first + rows - 1}`;
  return measureStall(
    announce(`stall (c), ${engineLabel(t.engine)}`, `${probeText(t)}, during POST ${path} one after another for ${STALL_POST_SECONDS} s`),
    fresh(t), probeOf(t), {
      kind: 'worker',
      loader: {
        script: 'bench/sequential.ts',
        job: (port): SequentialJob => ({
          origin: `https://127.0.0.1:${port}`, method: 'POST', path, bodies: POST_BODIES, warmups: 0, iterations: 1, minSeconds: STALL_POST_SECONDS,
          certFile: TLS_FILES.clientCert, keyFile: TLS_FILES.clientKey, check: { kind: 'updated', records: rows },
        }),
      },
    });
}
