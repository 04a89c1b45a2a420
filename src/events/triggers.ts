// Every change to a resource's record writes an event into the `events` table —
// the outbox the webhook dispatcher reads and the change feed shows — from a trigger
// on the resource's table, so no write path (API, workflow, CLI) can change a record
// without its event, the event commits or rolls back with the change, and a statement
// changing 5,000 rows adds its 5,000 events inside the database, without a round trip
// each. Each dialect builds the triggers (SqlDialect.eventTriggers) from a table's
// description, made here from the resource's definition.
//
// The event's data is the record as GET shows it without embeds: the definition's
// stored fields. Columns that are no field (password hashes, upload tokens, webhook
// secrets) never appear. An update that changes no field (a column of the service's
// own, or a value set to itself) makes no event.
//
// The triggers are installed after the migrations, in a step of their own
// (installEventTriggers), and again whenever the definitions they are made from
// change: a digest of their SQL is kept in `schema_parts`. Migrations never make them.
import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Database, Db } from '../db/database.ts';
import { EVENTS_LOCK } from '../db/event-triggers.ts';
import type { JsonMember, Sql, SqlDialect } from '../model/dialect.ts';
import type { EventKind, EventTable } from '../model/event-table.ts';
import type { Catalog, FieldDef, ResourceDef } from '../model/types.ts';

/** Fields that make up an event's data: what GET shows, without computed values (they depend on the caller). */
export const eventFields = (def: ResourceDef): FieldDef[] => def.fields.filter((f) => !f.computed);

/** The resources whose changes are events. */
export const eventResources = (catalog: Catalog): ResourceDef[] => catalog.all.filter((d) => d.events);

/** A table's events as the dialects' trigger builders read them. */
export function eventTable(def: ResourceDef): EventTable {
  return {
    endpoint: def.name, table: def.table, scopeColumn: def.scopeColumn,
    columns: eventFields(def).map((f) => ({
      name: f.name, type: f.type, column: f.column ?? f.name, ...(f.counter ? { role: 'counter' as const } : f.touch ? { role: 'touch' as const } : {}),
    })),
    transitions: def.events?.transitions ?? [],
  };
}

function compile(db: Kysely<unknown>, expr: Sql): string {
  const c = expr.compile(db);
  if (c.parameters.length > 0) throw new Error(`event trigger SQL has parameters: ${c.sql}`);
  return c.sql;
}

const PART = 'event_triggers';

async function installedDigest(db: Db): Promise<string | null> {
  const { rows } = await sql<{ digest: string }>`SELECT digest FROM schema_parts WHERE part = ${PART}`.execute(db);
  return rows[0]?.digest ?? null;
}

/**
 * Makes the event triggers of every event resource from the definitions, unless those
 * installed are already the ones they make; several instances may start at once (the
 * check and the install run under one lock). Returns whether it installed them.
 */
export async function installEventTriggers(database: Database, catalog: Catalog): Promise<boolean> {
  const { hooks, db } = database;
  const statements = eventResources(catalog).flatMap((def) => hooks.eventTriggers(eventTable(def)))
    .map((s) => compile(db as unknown as Kysely<unknown>, s));
  const digest = createHash('sha256').update(`${hooks.kind}\n${statements.join(';\n')}`).digest('hex');
  if ((await installedDigest(db)) === digest) return false;
  return database.transaction(async (trx) => {
    await hooks.lockFor(PART).execute(trx);
    if ((await installedDigest(trx)) === digest) return false;
    for (const text of statements) await sql.raw(text).execute(trx);
    await sql`DELETE FROM schema_parts WHERE part = ${PART}`.execute(trx);
    await sql`INSERT INTO schema_parts (part, digest) VALUES (${PART}, ${digest})`.execute(trx);
    return true;
  });
}

/**
 * Writes events of `kind` for the records `ids` of `def` in the caller's transaction,
 * as the triggers do (the reminder run's `assets.due` and `assets.overdue`).
 */
export async function emitEvents(db: Db, hooks: SqlDialect, def: ResourceDef, kind: EventKind, ids: readonly number[],
  extra: readonly JsonMember[] = []): Promise<void> {
  if (ids.length === 0) return;
  await hooks.lockFor(EVENTS_LOCK).execute(db);
  // The ids as one parameter: one statement text (prepared once) for any number of them.
  await hooks.insertEvents(eventTable(def), kind, sql`FROM ${sql.table(def.table)} AS t
    WHERE ${hooks.inIds(sql.ref('t.id'), hooks.idList(ids))} ORDER BY t.id`, extra).execute(db);
}
