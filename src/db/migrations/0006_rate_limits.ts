// The rate limiter's counters shared by the instances on one PostgreSQL: each key's theoretical arrival time, and the instances that took part
// lately (each spends its share of the burst between reconciliations). Unlogged:
// counters need no crash safety. SQLite serves one process, whose counters are
// in memory.
import { type Kysely, sql } from 'kysely';
import { forEngine } from '../dialects.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await forEngine(db, { sqlite: async () => {}, postgres: sharedCounters })(db);
}

async function sharedCounters(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE UNLOGGED TABLE rate_limit_buckets (key text COLLATE "C" PRIMARY KEY, tat double precision NOT NULL,
    updated double precision NOT NULL)`.execute(db);
  await sql`CREATE INDEX rate_limit_buckets_updated_idx ON rate_limit_buckets (updated)`.execute(db);
  await sql`CREATE UNLOGGED TABLE rate_limit_instances (id text COLLATE "C" PRIMARY KEY, seen double precision NOT NULL)`.execute(db);
}
