// Every change to a resource's record writes an event into the `events` table —
// the outbox the webhook dispatcher reads — from a trigger on the resource's table,
// so no write path (API, workflow, CLI) can change a record without its event, the
// event commits or rolls back with the change, and a statement changing 5,000 rows
// adds its 5,000 events inside the database, without a round trip each.
//
// The event's data is the record as GET shows it without embeds: the definition's
// stored fields, written as JSON by the same SQL that writes responses. Columns
// that are no field (password hashes, upload tokens, webhook secrets) never appear.
// An update that changes no field (a column of the service's own, or a value set
// to itself) makes no event.
//
// SQLite: row triggers (one writer; event order is commit order). PostgreSQL:
// statement triggers over transition tables, set-based; each takes a transaction
// advisory lock before it numbers its events and holds it until commit, so events
// are numbered in commit order — a reader never sees a larger seq before a
// smaller one has committed.
import { type Kysely, sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Sql, SqlDialect } from '../db/dialect.ts';
import { postgresHooks } from '../db/postgres.ts';
import type { Shape } from '../engine/context.ts';
import { objectSql } from '../engine/record-json.ts';
import { columnOf } from '../engine/select.ts';
import type { Catalog, FieldDef, ResourceDef } from '../model/types.ts';

/** The lock (SqlDialect.lockFor) that orders PostgreSQL's events. */
const EVENTS_LOCK = 'events';

/** Resources whose changes are events (every tenant resource with a table of its own, webhooks included). */
export const EVENT_RESOURCES = ['companies', 'departments', 'locations', 'externaltypes', 'assets', 'assetqueue', 'assetreminders',
  'files', 'messages', 'users', 'webhooks'] as const;

/** Fields that make up an event's data: what GET shows, without computed values (they depend on the caller). */
export const eventFields = (def: ResourceDef): FieldDef[] => def.fields.filter((f) => !f.computed);

const COLUMNS = sql`event_id, event, endpoint, record_id, op, company_id, scope_id, data, created`;

export interface Kind { readonly op: string; readonly event: string }

function compile(db: Kysely<unknown>, expr: Sql): string {
  const c = expr.compile(db);
  if (c.parameters.length > 0) throw new Error(`event trigger SQL has parameters: ${c.sql}`);
  return c.sql;
}

/** The INSERT … SELECT of events for the rows at alias `t` (and `o`, their old values, in updates). */
function insertEvents(s: Shape, def: ResourceDef, kind: Kind, from: Sql, ids: { eventId: Sql; now: Sql }): Sql {
  const scope = sql.ref(`t.${def.scopeColumn}`);
  return sql`INSERT INTO events (${COLUMNS}) SELECT ${ids.eventId}, ${sql.lit(kind.event)}, ${sql.lit(def.name)}, t.id, ${sql.lit(kind.op)},
    ${scope}, ${scope}, ${objectSql(s, eventFields(def), 't')}, ${ids.now} ${from}`;
}

/** A column of the old (`o`) or new (`t`) row, as the statement or trigger names it. */
type Side = (column: string) => Sql;
const aliased = (alias: string): Side => (column) => sql.ref(`${alias}.${column}`);
/** A row trigger's OLD or NEW row. */
const rowOf = (row: 'OLD' | 'NEW'): Side => (column) => sql`${sql.raw(row)}.${sql.id(column)}`;

/**
 * Some field the event shows differs between the old and the new row: what makes
 * an `updated` event and a new version (not `modified` or the version itself).
 */
function changed(hooks: SqlDialect, def: ResourceDef, o: Side = aliased('o'), t: Side = aliased('t')): Sql {
  const fields = eventFields(def).filter((f) => !f.touch && !f.counter && f.name !== 'id');
  return sql.join(fields.map((f) => hooks.differs(o(columnOf(f)), t(columnOf(f)), f.type)), sql` OR `);
}

/** The definition's version field, if its records have one (spec §14.2). */
const counterOf = (def: ResourceDef) => def.fields.find((f) => f.counter);

/** Queue transitions (spec §8.1) have events of their own beside `updated`: when, over the old (`o`) and new (`t`) row. */
const TRANSITIONS: Readonly<Record<string, readonly { kind: Kind; when: (o: Side, t: Side) => Sql }[]>> = {
  assetqueue: [
    { kind: { op: 'released', event: 'assetqueue.released' }, when: (o, t) => sql`${o('released')} <> 1 AND ${t('released')} = 1` },
    { kind: { op: 'rejected', event: 'assetqueue.rejected' }, when: (o, t) => sql`${o('released')} <> 2 AND ${t('released')} = 2` },
  ],
};

// Event ids: `evt_`, 12 hex digits of the time in milliseconds, 12 random ones. Ordered by
// time, a statement's events land together at the end of the ids' unique index; random ids
// landed all over it, and on SQLite a 5,000-row update spent more on the pages of that
// index (read, changed, written to the WAL) than on everything else it did.
const SQLITE_IDS = {
  eventId: sql`'evt_' || printf('%012x', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) || lower(hex(randomblob(6)))`,
  now: sql`strftime('%Y-%m-%d %H:%M:%S', 'now')`,
};
// (An id needs no secrecy, only uniqueness: PostgreSQL's random() instead of gen_random_uuid(), which
// costs 40 µs an event — 40 of a 1,000-asset PUT's 104 ms of insert.)
const POSTGRES_IDS = {
  eventId: sql`'evt_' || lpad(to_hex(CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS bigint)), 12, '0')
    || lpad(to_hex(CAST(floor(random() * 281474976710656) AS bigint)), 12, '0')`,
  now: sql`to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`,
};

/**
 * A row trigger's event, built from its NEW (or OLD) row itself, not by reading the
 * row again. `version` is the row's own or, where the trigger's first statement
 * raises it (a write that did not), one more.
 */
function rowEvent(s: Shape, def: ResourceDef, kind: Kind, row: 'NEW' | 'OLD', when: Sql | null, bumped: boolean): Sql {
  const members = eventFields(def).map((f) => {
    const value = f.counter && bumped ? sql`(NEW.${sql.id(columnOf(f))} + (NEW.${sql.id(columnOf(f))} = OLD.${sql.id(columnOf(f))}))`
      : sql`${sql.raw(row)}.${sql.id(columnOf(f))}`;
    return { name: f.name, type: f.type, value };
  });
  const scope = sql`${sql.raw(row)}.${sql.id(def.scopeColumn)}`;
  return sql`INSERT INTO events (${COLUMNS}) SELECT ${SQLITE_IDS.eventId}, ${sql.lit(kind.event)}, ${sql.lit(def.name)}, ${sql.raw(row)}.id,
    ${sql.lit(kind.op)}, ${scope}, ${scope}, ${s.hooks.jsonObject(members)}, ${SQLITE_IDS.now}${when ? sql` WHERE ${when}` : sql``}`;
}

function sqliteTriggers(db: Kysely<unknown>, s: Shape, def: ResourceDef): string[] {
  const table = sql.table(def.table);
  const name = (what: string) => sql.id(`events_${def.table}_${what}`);
  const OLD = rowOf('OLD');
  const NEW = rowOf('NEW');
  // Writes that did not raise the version themselves (the engine's do) raise it here;
  // recursive triggers are off, so this UPDATE does not fire this trigger again.
  const counter = counterOf(def);
  const bump = counter ? [sql`UPDATE ${table} SET ${sql.id(columnOf(counter))} = ${sql.id(columnOf(counter))} + 1
    WHERE NEW.${sql.id(columnOf(counter))} = OLD.${sql.id(columnOf(counter))} AND id = NEW.id
    AND (${changed(s.hooks, def, OLD, NEW)})`] : [];
  const updates = [
    ...bump,
    rowEvent(s, def, { op: 'updated', event: `${def.name}.updated` }, 'NEW', sql`(${changed(s.hooks, def, OLD, NEW)})`, !!counter),
    ...(TRANSITIONS[def.name] ?? []).map((x) => rowEvent(s, def, x.kind, 'NEW', x.when(OLD, NEW), !!counter)),
  ];
  return [
    sql`CREATE TRIGGER ${name('insert')} AFTER INSERT ON ${table} BEGIN
      ${rowEvent(s, def, { op: 'created', event: `${def.name}.created` }, 'NEW', null, false)}; END`,
    sql`CREATE TRIGGER ${name('update')} AFTER UPDATE ON ${table} BEGIN ${sql.join(updates.map((u) => sql`${u};`), sql` `)} END`,
    sql`CREATE TRIGGER ${name('delete')} BEFORE DELETE ON ${table} BEGIN
      ${rowEvent(s, def, { op: 'deleted', event: `${def.name}.deleted` }, 'OLD', null, false)}; END`,
  ].map((t) => compile(db, t));
}

function postgresTriggers(db: Kysely<unknown>, s: Shape, def: ResourceDef): string[] {
  const table = sql.table(def.table);
  const out: string[] = [];
  // lockFor's lock, written out: a trigger's SQL takes no parameters.
  const lock = sql`PERFORM pg_advisory_xact_lock(hashtext(${sql.lit(EVENTS_LOCK)}));`;
  const define = (what: string, timing: string, referencing: string, inserts: Sql[], any: string) => {
    const fn = sql.id(`events_${def.table}_${what}`);
    out.push(compile(db, sql`CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF EXISTS (SELECT 1 FROM ${sql.raw(any)}) THEN
          ${lock}
          ${sql.join(inserts.map((i) => sql`${i};`), sql` `)}
        END IF;
        RETURN NULL;
      END $fn$`));
    out.push(compile(db, sql`CREATE TRIGGER ${fn} ${sql.raw(timing)} ON ${table} REFERENCING ${sql.raw(referencing)}
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`));
  };
  const ordered = (from: Sql) => sql`${from} ORDER BY t.id`;
  define('insert', 'AFTER INSERT', 'NEW TABLE AS new_rows',
    [insertEvents(s, def, { op: 'created', event: `${def.name}.created` }, ordered(sql`FROM new_rows AS t`), POSTGRES_IDS)], 'new_rows');
  const pairs = sql`FROM new_rows AS t JOIN old_rows AS o ON o.id = t.id`;
  define('update', 'AFTER UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows', [
    insertEvents(s, def, { op: 'updated', event: `${def.name}.updated` }, ordered(sql`${pairs} WHERE ${changed(s.hooks, def)}`), POSTGRES_IDS),
    ...(TRANSITIONS[def.name] ?? []).map((x) => insertEvents(s, def, x.kind, ordered(sql`${pairs} WHERE ${x.when(aliased('o'), aliased('t'))}`), POSTGRES_IDS)),
  ], 'new_rows');
  define('delete', 'AFTER DELETE', 'OLD TABLE AS old_rows',
    [insertEvents(s, def, { op: 'deleted', event: `${def.name}.deleted` }, ordered(sql`FROM old_rows AS t`), POSTGRES_IDS)], 'old_rows');
  const counter = counterOf(def);
  if (counter) {
    // Writes that did not raise the version themselves (the engine's do) get it raised
    // here, row by row before the row is written; the WHEN spares the engine's rows the call.
    const fn = sql.id(`versions_${def.table}`);
    const column = sql.id(columnOf(counter));
    out.push(compile(db, sql`CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF ${changed(s.hooks, def, rowOf('OLD'), rowOf('NEW'))} THEN NEW.${column} := OLD.${column} + 1; END IF;
        RETURN NEW;
      END $fn$`));
    out.push(compile(db, sql`CREATE TRIGGER ${fn} BEFORE UPDATE ON ${table} FOR EACH ROW
      WHEN (OLD.${column} = NEW.${column}) EXECUTE FUNCTION ${fn}()`));
  }
  return out;
}

/** The columns a table has now. */
async function columnsOf(db: Kysely<unknown>, postgres: boolean, table: string): Promise<Set<string>> {
  const { rows } = await (postgres
    ? sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table}`
    : sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`).execute(db);
  return new Set(rows.map((r) => r.name));
}

/**
 * (Re)creates the event triggers of every event resource from the definitions,
 * as far as the schema has their columns at this point of the migrations (a
 * migration that adds a column the definitions already name calls this again).
 */
export async function installEventTriggers(db: Kysely<unknown>, hooks: SqlDialect, catalog: Catalog): Promise<void> {
  const s: Shape = { hooks, catalog, level: 'basic' };
  const postgres = hooks === postgresHooks;
  for (const name of EVENT_RESOURCES) {
    const defined = catalog.lookup(name);
    const columns = await columnsOf(db, postgres, defined.table);
    const def = { ...defined, fields: defined.fields.filter((f) => f.computed || columns.has(columnOf(f))) };
    const on = postgres ? sql` ON ${sql.table(def.table)}` : sql``;
    for (const what of ['insert', 'update', 'delete']) await sql`DROP TRIGGER IF EXISTS ${sql.id(`events_${def.table}_${what}`)}${on}`.execute(db);
    if (postgres) await sql`DROP TRIGGER IF EXISTS ${sql.id(`versions_${def.table}`)}${on}`.execute(db);
    for (const text of postgres ? postgresTriggers(db, s, def) : sqliteTriggers(db, s, def)) await sql.raw(text).execute(db);
  }
}

/**
 * Writes events of `name` (op `op`) for the records `ids` of `def` in the caller's
 * transaction, as the triggers do (the reminder run's `assets.due` and `assets.overdue`).
 */
export async function emitEvents(db: Db, s: Shape, def: ResourceDef, kind: Kind, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await s.hooks.lockFor(EVENTS_LOCK).execute(db);
  // The ids as one parameter: one statement text (prepared once) for any number of them.
  await insertEvents(s, def, kind, sql`FROM ${sql.table(def.table)} AS t WHERE ${s.hooks.inIds(sql.ref('t.id'), s.hooks.idList(ids))} ORDER BY t.id`,
    s.hooks === postgresHooks ? POSTGRES_IDS : SQLITE_IDS).execute(db);
}
