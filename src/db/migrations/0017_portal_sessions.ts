// Sessions opened on the portal (a browser, no certificate) have no client, and
// the portal's failed logins are budgeted per client address instead of per
// certificate. SQLite cannot drop a NOT NULL in place, so there the sessions
// table is rebuilt with the same columns and indexes.
import { type Kysely, sql } from 'kysely';
import { forEngine } from '../dialects.ts';
import { createIndex, createTable } from './0001_initial.ts';

const NN = { notNull: true } as const;

async function sqliteRebuild(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE sessions_next (id integer PRIMARY KEY AUTOINCREMENT, token_hash text NOT NULL UNIQUE,
    client_id integer REFERENCES clients (id), user_id integer NOT NULL REFERENCES users (id),
    company_id integer NOT NULL REFERENCES companies (id), created text NOT NULL, last_used text NOT NULL, expires text NOT NULL)`.execute(db);
  await sql`INSERT INTO sessions_next (id, token_hash, client_id, user_id, company_id, created, last_used, expires)
    SELECT id, token_hash, client_id, user_id, company_id, created, last_used, expires FROM sessions`.execute(db);
  await sql`DROP TABLE sessions`.execute(db);
  await sql`ALTER TABLE sessions_next RENAME TO sessions`.execute(db);
  for (const cols of [['user_id'], ['client_id'], ['expires']]) await createIndex(db, 'sessions', cols);
}

async function postgresAlter(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions ALTER COLUMN client_id DROP NOT NULL`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await forEngine(db, { sqlite: sqliteRebuild, postgres: postgresAlter })(db);
  await createTable(db, 'login_address_budget', [
    ['address', 'text', { notNull: true, unique: true }], ['window_start', 'text', NN], ['failures', 'int', NN],
  ]);
}
