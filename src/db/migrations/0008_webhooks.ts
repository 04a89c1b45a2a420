// Webhooks: the registered receivers, the outbox of events every change
// writes (from triggers, which events/ installs after the migrations), the
// deliveries the dispatcher makes of them, and the due/overdue notices the reminder
// run has raised once per asset and due date.
//
// (Until the triggers had a step of their own, this migration made them from the
// definitions of its day; a store migrated so has them made again by that step.)
import type { Kysely } from 'kysely';
import { createIndex, createTable } from './0001_initial.ts';

const NN = { notNull: true } as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'webhooks', [
    ['id', 'id'], ['company_id', 'int', { notNull: true, references: 'companies.id' }], ['url', 'text', NN],
    ['events', 'json', NN], ['active', 'int', { notNull: true, default: 1 }], ['data', 'json'], ['created', 'text', NN], ['modified', 'text', NN],
    // The secret signs deliveries; after a rotation the previous one signs too until previous_until.
    ['secret', 'text', NN], ['previous_secret', 'text'], ['previous_until', 'text'],
    // The last event seq considered for this webhook, since when it has failed without a success, and who delivers it now.
    ['cursor', 'int', { notNull: true, default: 0 }], ['failing_since', 'text'], ['lease_owner', 'text'], ['lease_until', 'text'],
  ]);
  await createIndex(db, 'webhooks', ['company_id', 'id']);

  await createTable(db, 'events', [
    ['seq', 'id'], ['event_id', 'text', { notNull: true, unique: true }], ['event', 'text', NN], ['endpoint', 'text', NN],
    ['record_id', 'int'], ['op', 'text', NN], ['company_id', 'int'],
    // The company whose tree routes the event: the record's, or a deleted company's heir.
    ['scope_id', 'int'], ['data', 'json', NN], ['created', 'text', NN],
  ]);
  await createIndex(db, 'events', ['created']);

  await createTable(db, 'webhook_deliveries', [
    ['id', 'id'], ['webhook_id', 'int', { notNull: true, references: 'webhooks.id' }], ['company_id', 'int', NN],
    ['event_seq', 'int', NN], ['event_id', 'text', NN], ['event', 'text', NN], ['attempt', 'int', { notNull: true, default: 0 }],
    ['status', 'text', NN], ['response_status', 'int'], ['error', 'text'], ['created', 'text', NN], ['next_attempt', 'text'],
    ['modified', 'text', NN],
  ], [['webhook_id', 'event_seq']]);
  for (const cols of [['company_id', 'id'], ['status', 'next_attempt'], ['event_id']]) await createIndex(db, 'webhook_deliveries', cols);

  await createTable(db, 'due_notices', [['asset_id', 'int', NN], ['due_date', 'text', NN], ['kind', 'text', NN]],
    [['asset_id', 'due_date', 'kind']]);

}
