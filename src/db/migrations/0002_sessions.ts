// Impersonation mode: sessions and login throttling live in the
// database so that every instance shares them.
import type { Kysely } from 'kysely';
import { createIndex, createTable } from './0001_initial.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Only a hash of each token is stored.
  await createTable(db, 'sessions', [
    ['id', 'id'], ['token_hash', 'text', { notNull: true, unique: true }],
    ['client_id', 'int', { notNull: true, references: 'clients.id' }], ['user_id', 'int', { notNull: true, references: 'users.id' }],
    ['company_id', 'int', { notNull: true, references: 'companies.id' }],
    ['created', 'text', { notNull: true }], ['last_used', 'text', { notNull: true }], ['expires', 'text', { notNull: true }],
  ]);
  for (const cols of [['user_id'], ['client_id'], ['expires']]) await createIndex(db, 'sessions', cols);

  // Consecutive failed logins per username, and the delay they impose.
  await createTable(db, 'login_throttle', [
    ['username', 'text', { notNull: true, unique: true }], ['failures', 'int', { notNull: true }], ['retry_at', 'text', { notNull: true }],
  ]);
  // Failed logins per certificate in the current hour.
  await createTable(db, 'login_budget', [
    ['client_id', 'int', { notNull: true, unique: true, references: 'clients.id' }], ['window_start', 'text', { notNull: true }],
    ['failures', 'int', { notNull: true }],
  ]);
}
