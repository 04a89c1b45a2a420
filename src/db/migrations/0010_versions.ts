// Record versions: every record type that carries `modified` gets
// `version`, 1 for the records there are now and for new ones (the column's
// default), raised by one with every change to another stored value — by the
// engine in its own UPDATEs, and by the event triggers for every other write.
//
// (Until the triggers had a step of their own, this migration read its table list
// from the definitions of its day and made the triggers again: the list is written
// out as it was then.)
import type { Kysely } from 'kysely';
import { forEngine } from '../dialects.ts';

const TABLES = ['companies', 'departments', 'locations', 'externaltypes', 'assets', 'assetqueue', 'files', 'messages', 'users', 'webhooks'];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.alterTable(table).addColumn('version', forEngine(db, { sqlite: 'integer', postgres: 'bigint' }), (c) => c.notNull().defaultTo(1)).execute();
  }
}
