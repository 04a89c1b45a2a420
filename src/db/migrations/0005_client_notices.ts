// Every committed change to `clients` is announced (NOTIFY) on PostgreSQL, so that
// each instance's certificate cache forgets it at once (db/clients.ts). SQLite
// needs none: its certificate look-up is not cached.
import { type Kysely, sql } from 'kysely';
import { forEngine } from '../dialects.ts';

async function announceChanges(db: Kysely<unknown>): Promise<void> {
  // The channel's name is written out: db/clients.ts listens on it (CLIENTS_CHANNEL).
  await sql.raw(`CREATE FUNCTION clients_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('asset_tracker_clients', ''); RETURN NULL; END $$`).execute(db);
  await sql.raw(`CREATE TRIGGER clients_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON clients
    FOR EACH STATEMENT EXECUTE FUNCTION clients_changed()`).execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await forEngine(db, { sqlite: async () => {}, postgres: announceChanges })(db);
}
