// The rate limiter's shared state on PostgreSQL (rate-limit counters
// are shared by all instances): one reconciliation per instance every 100 ms, one
// statement, over unlogged tables (counters need no crash safety).
import { sql } from 'kysely';
import type { SharedStore } from '../ratelimit/limiter.ts';
import { type Database, execute } from './database.ts';
import { Param } from './statements.ts';

/** Instances that reconciled this recently count as live. */
const LIVE_MS = 3_000;
/** Keys untouched this long are removed (their buckets are long full again). */
const FORGET_MS = 600_000;

const P = { instance: new Param('instance'), now: new Param('now'), keys: new Param('keys'), costs: new Param('costs') };

export function postgresRateLimits(database: Database): SharedStore {
  let rounds = 0;
  const reconcile = database.statements.get('rate-limit-reconcile', () => sql`WITH me AS (
      INSERT INTO rate_limit_instances (id, seen) VALUES (${P.instance}, CAST(${P.now} AS float8))
      ON CONFLICT (id) DO UPDATE SET seen = EXCLUDED.seen),
    up AS (
      INSERT INTO rate_limit_buckets (key, tat, updated)
      SELECT k, CAST(${P.now} AS float8) + c, CAST(${P.now} AS float8) FROM unnest(CAST(${P.keys} AS text[]), CAST(${P.costs} AS float8[])) AS u(k, c)
      ON CONFLICT (key) DO UPDATE SET tat = GREATEST(rate_limit_buckets.tat, EXCLUDED.updated) + (EXCLUDED.tat - EXCLUDED.updated),
        updated = EXCLUDED.updated
      RETURNING key, tat)
    SELECT (SELECT count(*) FROM rate_limit_instances WHERE seen > CAST(${P.now} AS float8) - ${LIVE_MS} AND id <> ${P.instance}) + 1 AS instances,
      (SELECT json_agg(json_build_array(key, tat)) FROM up) AS tats`);
  const forget = database.statements.get('rate-limit-forget', () => sql`WITH b AS (DELETE FROM rate_limit_buckets WHERE updated < CAST(${P.now} AS float8) - ${FORGET_MS})
    DELETE FROM rate_limit_instances WHERE seen < CAST(${P.now} AS float8) - ${FORGET_MS}`);
  return {
    async reconcile(instance, consumed, now) {
      if (++rounds % 100 === 0) await execute(database.db, forget, { now });
      const { rows: [row] } = await execute<{ instances: number | string; tats: string | null }>(database.db, reconcile,
        { instance, now, keys: [...consumed.keys()], costs: [...consumed.values()] });
      const pairs = row?.tats ? (JSON.parse(row.tats) as [string, number][]) : [];
      return { tats: new Map(pairs), instances: Number(row?.instances ?? 1) };
    },
    close: async () => {},
  };
}
