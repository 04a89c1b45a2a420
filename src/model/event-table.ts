// What the event triggers of one table write, described so that each
// dialect can build them (SqlDialect.eventTriggers): events/ makes one per event
// resource from its definition. Types only.
import type { FieldType, Sql } from './sql.ts';

export interface EventKind { readonly op: string; readonly event: string }

/** A column of the old or the new row, as a statement (an alias) or a row trigger (OLD/NEW) names it. */
export type Side = (column: string) => Sql;

export interface EventColumn {
  readonly name: string;
  readonly type: FieldType;
  readonly column: string;
  /** The record's version (raised where a write did not raise it), or its `modified` time: neither makes a change. */
  readonly role?: 'counter' | 'touch';
}

export interface EventTable {
  /** The endpoint the events are about, and its table. */
  readonly endpoint: string;
  readonly table: string;
  /** The column that places a record in a company. */
  readonly scopeColumn: string;
  /** What an event's data shows, in order: the record as GET shows it without embeds and computed values. */
  readonly columns: readonly EventColumn[];
  /** Events of their own beside `updated` (the queue's transitions): when they happen, over the old and the new row. */
  readonly transitions: readonly { readonly kind: EventKind; readonly when: (old: Side, row: Side) => Sql }[];
}
