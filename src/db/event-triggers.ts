// What both dialects' event triggers share (db/sqlite-events.ts, db/postgres-events.ts):
// the events table's columns, the event's data as JSON, what counts as a change.
import { sql } from 'kysely';
import type { JsonMember, Sql, SqlDialect } from '../model/dialect.ts';
import type { EventColumn, EventTable, Side } from '../model/event-table.ts';

export const EVENT_COLUMNS = sql`event_id, event, endpoint, record_id, op, company_id, scope_id, data, created`;

/** The lock (SqlDialect.lockFor) that numbers PostgreSQL's events in commit order. */
export const EVENTS_LOCK = 'events';

/** A column of the row at an alias (`t` new, `o` old), or of a row trigger's NEW or OLD row. */
export const aliased = (alias: string): Side => (column) => sql.ref(`${alias}.${column}`);
export const rowOf = (row: 'OLD' | 'NEW'): Side => (column) => sql`${sql.raw(row)}.${sql.id(column)}`;

export const counterOf = (t: EventTable): EventColumn | undefined => t.columns.find((c) => c.role === 'counter');

/**
 * Some column an event shows differs between the old and the new row: what makes an
 * `updated` event and a new version (not `modified`, the version itself or the id).
 */
export const changed = (hooks: SqlDialect, t: EventTable, old: Side, row: Side): Sql => sql.join(
  t.columns.filter((c) => !c.role && c.name !== 'id').map((c) => hooks.differs(old(c.column), row(c.column), c.type)), sql` OR `);

/** The event's data: the row's columns as a JSON object; `value` may give a column's value another way. */
export const eventData = (hooks: SqlDialect, t: EventTable, row: Side, value: (c: EventColumn) => Sql | null = () => null,
  extra: readonly JsonMember[] = []): Sql =>
  hooks.jsonObject([...t.columns.map((c) => ({ name: c.name, type: c.type, value: value(c) ?? row(c.column) })), ...extra]);

/** Event ids and times as each dialect writes them. */
export interface EventIds { readonly eventId: Sql; readonly now: Sql }

/** The INSERT … SELECT of events of `kind` for the rows at alias `t` that `from` selects. */
export const insertEventRows = (hooks: SqlDialect, ids: EventIds, t: EventTable, op: string, event: string, from: Sql,
  extra: readonly JsonMember[] = []): Sql => {
  const scope = sql.ref(`t.${t.scopeColumn}`);
  return sql`INSERT INTO events (${EVENT_COLUMNS}) SELECT ${ids.eventId}, ${sql.lit(event)}, ${sql.lit(t.endpoint)}, t.id, ${sql.lit(op)},
    ${scope}, ${scope}, ${eventData(hooks, t, aliased('t'), undefined, extra)}, ${ids.now} ${from}`;
};
