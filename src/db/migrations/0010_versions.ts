// Record versions (spec §14.2): every record type that carries `modified` gets
// `version`, 1 for the records there are now and for new ones (the column's
// default), raised by one with every change to another stored value — by the
// engine in its own UPDATEs, and by the event triggers, reinstalled here, for
// every other write.
import { type Kysely, PostgresAdapter } from 'kysely';
import { EVENT_RESOURCES, installEventTriggers } from '../../events/triggers.ts';
import { createRegistry } from '../../resources/registry.ts';
import { postgresHooks } from '../postgres.ts';
import { sqliteHooks } from '../sqlite.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const registry = createRegistry();
  for (const name of EVENT_RESOURCES) {
    const def = registry.lookup(name);
    if (!def.fields.some((f) => f.counter)) continue;
    await db.schema.alterTable(def.table).addColumn('version', postgres ? 'bigint' : 'integer', (c) => c.notNull().defaultTo(1)).execute();
  }
  await installEventTriggers(db, postgres ? postgresHooks : sqliteHooks, registry);
}
