// Every committed change to `clients` is announced (NOTIFY) on PostgreSQL, so that
// each instance's certificate cache forgets it at once (db/clients.ts). SQLite
// needs none: its certificate look-up is not cached.
import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialects.ts';
import { CLIENTS_CHANNEL } from '../clients.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db).kind !== 'postgres') return;
  await sql.raw(`CREATE FUNCTION clients_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('${CLIENTS_CHANNEL}', ''); RETURN NULL; END $$`).execute(db);
  await sql.raw(`CREATE TRIGGER clients_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON clients
    FOR EACH STATEMENT EXECUTE FUNCTION clients_changed()`).execute(db);
}
