// The portal's calendar feeds and public labels: one feed token per user (only its
// hash stored), and the service's secrets by name — the key that signs the assets'
// public status links lives here so that every instance signs alike.
import type { Kysely } from 'kysely';
import { createTable } from './0001_initial.ts';

const NN = { notNull: true } as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'calendar_feeds', [
    ['user_id', 'int', { notNull: true, unique: true, references: 'users.id' }], ['token_hash', 'text', { notNull: true, unique: true }],
    ['created', 'text', NN],
  ]);
  await createTable(db, 'service_secrets', [['name', 'text', { notNull: true, unique: true }], ['secret', 'text', NN], ['created', 'text', NN]]);
}
