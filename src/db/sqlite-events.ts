// SQLite's event triggers (SqlDialect.eventTriggers): row triggers — one writer, so
// an event's order is its commit order. Each builds the event from the row it has
// (NEW or OLD) instead of reading the row again.
import { sql } from 'kysely';
import type { JsonMember, Sql, SqlDialect } from '../model/dialect.ts';
import type { EventKind, EventTable } from '../model/event-table.ts';
import { changed, counterOf, EVENT_COLUMNS, type EventIds, eventData, insertEventRows, rowOf } from './event-triggers.ts';

// `evt_`, 12 hex digits of the time in milliseconds, 12 random ones. Ordered by time,
// a statement's events land together at the end of the ids' unique index; random ids
// landed all over it, and a 5,000-row update spent more on that index's pages (read,
// changed, written to the WAL) than on all else it did (149 against 68 ms of CPU).
const IDS: EventIds = {
  eventId: sql`'evt_' || printf('%012x', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) || lower(hex(randomblob(6)))`,
  now: sql`strftime('%Y-%m-%d %H:%M:%S', 'now')`,
};

const OLD = rowOf('OLD');
const NEW = rowOf('NEW');

/** A row trigger's event; `bumped`: the trigger raised the version first (a write that did not), so the event shows one more. */
function rowEvent(hooks: SqlDialect, t: EventTable, kind: EventKind, row: 'NEW' | 'OLD', when: Sql | null, bumped: boolean): Sql {
  const side = rowOf(row);
  const data = eventData(hooks, t, side, (c) => (c.role === 'counter' && bumped ? sql`(${NEW(c.column)} + (${NEW(c.column)} = ${OLD(c.column)}))` : null));
  const scope = side(t.scopeColumn);
  return sql`INSERT INTO events (${EVENT_COLUMNS}) SELECT ${IDS.eventId}, ${sql.lit(kind.event)}, ${sql.lit(t.endpoint)}, ${side('id')},
    ${sql.lit(kind.op)}, ${scope}, ${scope}, ${data}, ${IDS.now}${when ? sql` WHERE ${when}` : sql``}`;
}

export function sqliteEventTriggers(hooks: SqlDialect, t: EventTable): Sql[] {
  const table = sql.table(t.table);
  const name = (what: string) => sql.id(`events_${t.table}_${what}`);
  // Writes that did not raise the version themselves (the engine's do) raise it here;
  // recursive triggers are off, so this UPDATE does not fire this trigger again.
  const counter = counterOf(t);
  const bump = counter ? [sql`UPDATE ${table} SET ${sql.id(counter.column)} = ${sql.id(counter.column)} + 1
    WHERE ${NEW(counter.column)} = ${OLD(counter.column)} AND id = NEW.id AND (${changed(hooks, t, OLD, NEW)})`] : [];
  const updates = [
    ...bump,
    rowEvent(hooks, t, { op: 'updated', event: `${t.endpoint}.updated` }, 'NEW', sql`(${changed(hooks, t, OLD, NEW)})`, !!counter),
    ...t.transitions.map((x) => rowEvent(hooks, t, x.kind, 'NEW', x.when(OLD, NEW), !!counter)),
  ];
  return [
    ...['insert', 'update', 'delete'].map((what) => sql`DROP TRIGGER IF EXISTS ${name(what)}`),
    sql`CREATE TRIGGER ${name('insert')} AFTER INSERT ON ${table} BEGIN
      ${rowEvent(hooks, t, { op: 'created', event: `${t.endpoint}.created` }, 'NEW', null, false)}; END`,
    sql`CREATE TRIGGER ${name('update')} AFTER UPDATE ON ${table} BEGIN ${sql.join(updates.map((u) => sql`${u};`), sql` `)} END`,
    sql`CREATE TRIGGER ${name('delete')} BEFORE DELETE ON ${table} BEGIN
      ${rowEvent(hooks, t, { op: 'deleted', event: `${t.endpoint}.deleted` }, 'OLD', null, false)}; END`,
  ];
}

export const sqliteInsertEvents = (hooks: SqlDialect, t: EventTable, kind: EventKind, from: Sql, extra: readonly JsonMember[] = []): Sql =>
  insertEventRows(hooks, IDS, t, kind.op, kind.event, from, extra);
