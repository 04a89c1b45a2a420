// E-mail: the outbox of messages to send (reminder digests and weekly due lists),
// the digest items a reminder run queues for each user until they are sealed into
// one digest, and the ISO weeks a company's weekly list was queued for (the key that signs
// unsubscribe links is one of the service's secrets, migration 0021).
import type { Kysely } from 'kysely';
import { createIndex, createTable } from './0001_initial.ts';

const NN = { notNull: true } as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'mail_outbox', [
    ['id', 'id'], ['company_id', 'int', NN], ['user_id', 'int', NN], ['kind', 'text', NN], ['data', 'json'],
    ['attempt', 'int', { notNull: true, default: 0 }], ['status', 'text', NN], ['next_attempt', 'text'],
    ['lease_owner', 'text'], ['lease_until', 'text'], ['recipient', 'text'], ['response', 'text'], ['error', 'text'],
    ['created', 'text', NN], ['modified', 'text', NN],
  ]);
  for (const cols of [['status', 'next_attempt'], ['modified'], ['company_id', 'id']]) await createIndex(db, 'mail_outbox', cols);

  await createTable(db, 'mail_digest_items', [
    ['id', 'id'], ['company_id', 'int', NN], ['user_id', 'int', NN], ['asset_id', 'int', NN], ['due_date', 'text', NN],
    ['overdue', 'int', NN], ['digest_id', 'int'],
  ]);
  for (const cols of [['company_id', 'digest_id', 'user_id'], ['digest_id', 'id']]) await createIndex(db, 'mail_digest_items', cols);

  await createTable(db, 'weekly_reports', [['company_id', 'int', NN], ['week', 'text', NN], ['created', 'text', NN]],
    [['company_id', 'week']]);
}
