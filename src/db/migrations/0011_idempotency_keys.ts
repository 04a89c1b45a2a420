// Idempotency keys: one row per certificate, session user (0 in basic
// mode) and key, claimed before the request runs (`status` NULL while it does,
// `owner` the claiming request, `locked_until` when a claim left by a crashed
// process may be taken over) and given the reply in the write's own transaction:
// its status, its `response` member and the time its envelope showed. The rest of
// the envelope (the session, whose token is never stored) is written again at replay.
import type { Kysely } from 'kysely';
import { createIndex, createTable } from './0001_initial.ts';

const NN = { notNull: true } as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'idempotency_keys', [
    ['client_id', 'int', NN], ['user_id', 'int', NN], ['key', 'text', NN],
    ['verb', 'text', NN], ['path', 'text', NN], ['body_hash', 'text', NN],
    ['owner', 'text', NN], ['locked_until', 'text', NN], ['expires', 'text', NN],
    ['status', 'int'], ['answered', 'int'], ['response', 'text'],
  ], [['client_id', 'user_id', 'key']]);
  await createIndex(db, 'idempotency_keys', ['expires']);
}
