// PostgreSQL's event triggers (SqlDialect.eventTriggers): statement triggers over
// transition tables, set-based (a statement changing 5,000 rows adds its 5,000 events
// in one INSERT). Each takes a transaction advisory lock before it numbers its events
// and holds it until commit, so events are numbered in commit order — a reader never
// sees a larger seq before a smaller one has committed.
import { sql } from 'kysely';
import type { JsonMember, Sql, SqlDialect } from '../model/dialect.ts';
import type { EventKind, EventTable } from '../model/event-table.ts';
import { aliased, changed, counterOf, type EventIds, EVENTS_LOCK, insertEventRows, rowOf } from './event-triggers.ts';

// `evt_`, 12 hex digits of the time in milliseconds, 12 random ones (see sqlite-events.ts).
// An id needs no secrecy, only uniqueness: random() instead of gen_random_uuid(), which
// cost 40 µs an event — 40 of the 104 ms a 1,000-asset insert spent in its triggers.
const IDS: EventIds = {
  eventId: sql`'evt_' || lpad(to_hex(CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS bigint)), 12, '0')
    || lpad(to_hex(CAST(floor(random() * 281474976710656) AS bigint)), 12, '0')`,
  now: sql`to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`,
};

const ordered = (from: Sql) => sql`${from} ORDER BY t.id`;

export function postgresEventTriggers(hooks: SqlDialect, t: EventTable): Sql[] {
  const table = sql.table(t.table);
  const out: Sql[] = [];
  const insert = (kind: EventKind, from: Sql) => insertEventRows(hooks, IDS, t, kind.op, kind.event, ordered(from));
  // lockFor's lock, written out: a trigger's SQL takes no parameters.
  const lock = sql`PERFORM pg_advisory_xact_lock(hashtext(${sql.lit(EVENTS_LOCK)}));`;
  const define = (what: string, timing: string, referencing: string, inserts: Sql[], any: string) => {
    const fn = sql.id(`events_${t.table}_${what}`);
    out.push(sql`DROP TRIGGER IF EXISTS ${fn} ON ${table}`);
    out.push(sql`CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF EXISTS (SELECT 1 FROM ${sql.raw(any)}) THEN
          ${lock}
          ${sql.join(inserts.map((i) => sql`${i};`), sql` `)}
        END IF;
        RETURN NULL;
      END $fn$`);
    out.push(sql`CREATE TRIGGER ${fn} ${sql.raw(timing)} ON ${table} REFERENCING ${sql.raw(referencing)}
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`);
  };
  define('insert', 'AFTER INSERT', 'NEW TABLE AS new_rows', [insert({ op: 'created', event: `${t.endpoint}.created` }, sql`FROM new_rows AS t`)], 'new_rows');
  const pairs = sql`FROM new_rows AS t JOIN old_rows AS o ON o.id = t.id`;
  define('update', 'AFTER UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows', [
    insert({ op: 'updated', event: `${t.endpoint}.updated` }, sql`${pairs} WHERE ${changed(hooks, t, aliased('o'), aliased('t'))}`),
    ...t.transitions.map((x) => insert(x.kind, sql`${pairs} WHERE ${x.when(aliased('o'), aliased('t'))}`)),
  ], 'new_rows');
  define('delete', 'AFTER DELETE', 'OLD TABLE AS old_rows', [insert({ op: 'deleted', event: `${t.endpoint}.deleted` }, sql`FROM old_rows AS t`)], 'old_rows');
  const counter = counterOf(t);
  const versions = sql.id(`versions_${t.table}`);
  out.push(sql`DROP TRIGGER IF EXISTS ${versions} ON ${table}`);
  if (counter) {
    // Writes that did not raise the version themselves (the engine's do) get it raised
    // here, row by row before the row is written; the WHEN spares the engine's rows the call.
    const column = sql.id(counter.column);
    out.push(sql`CREATE OR REPLACE FUNCTION ${versions}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF ${changed(hooks, t, rowOf('OLD'), rowOf('NEW'))} THEN NEW.${column} := OLD.${column} + 1; END IF;
        RETURN NEW;
      END $fn$`);
    out.push(sql`CREATE TRIGGER ${versions} BEFORE UPDATE ON ${table} FOR EACH ROW
      WHEN (OLD.${column} = NEW.${column}) EXECUTE FUNCTION ${versions}()`);
  }
  return out;
}

export const postgresInsertEvents = (hooks: SqlDialect, t: EventTable, kind: EventKind, from: Sql, extra: readonly JsonMember[] = []): Sql =>
  insertEventRows(hooks, IDS, t, kind.op, kind.event, from, extra);
