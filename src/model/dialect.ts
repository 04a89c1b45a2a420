// Where SQLite and PostgreSQL differ, and nowhere else: the hook interface (types
// only). Every piece of dialect-specific SQL the service needs is a hook here,
// implemented by db/sqlite.ts and db/postgres.ts; callers never branch on the engine.
import type { EventKind, EventTable } from './event-table.ts';
import type { FieldType, Sql } from './sql.ts';

export type { Sql };

/** A value inside a JSON column, normalised so both engines answer alike. */
export interface JsonAccess {
  /** 'null' | 'number' | 'string' | 'boolean' | 'container'; SQL NULL when the key is missing. */
  readonly kind: Sql;
  /** Strings unquoted, other scalars as written, containers as JSON text; NULL for null/missing. */
  readonly text: Sql;
  /** The number, only where kind = 'number'. */
  readonly number: Sql;
}

/** The top-level members of a JSON object column, joined as rows. */
export interface JsonEntries {
  /** A join clause (`CROSS JOIN …`) adding one row per member. */
  readonly join: Sql;
  readonly key: Sql;
  readonly kind: Sql;
  readonly text: Sql;
}

export interface JsonMember {
  readonly name: string;
  readonly type: FieldType | 'embed';
  readonly value: Sql;
}

export interface SqlDialect {
  readonly kind: 'sqlite' | 'postgres';
  readonly json: (column: Sql, keys: readonly string[]) => JsonAccess;
  readonly jsonEntries: (column: Sql) => JsonEntries;
  /** A JSON number given as its text, as a number comparable with JsonAccess.number, whatever its size. */
  readonly number: (text: unknown) => Sql;
  /** Any scalar as text that compares by bytes. */
  readonly text: (expr: Sql) => Sql;
  /** Byte-order comparison of an already textual expression. */
  readonly bytewise: (expr: Sql) => Sql;
  /** `expr` contains `needle`, ASCII letters folded, every other character compared as is. */
  readonly contains: (expr: Sql, needle: unknown) => Sql;
  /**
   * The JSON text of a value of a field type, exactly as JSON.stringify writes it
   * (strings quoted and escaped, numbers as digits, JSON columns as stored, NULL as `null`).
   */
  readonly jsonValue: (type: FieldType, expr: Sql) => Sql;
  /**
   * A JSON object of these members in this order, as JSON.stringify writes it, as
   * the dialect's JSON value (text on SQLite, json on PostgreSQL), for storing
   * (events, audit entries); an 'embed' member's value is such a JSON value itself.
   */
  readonly jsonObject: (members: readonly JsonMember[]) => Sql;
  /** The same object as text, for reading (records as a GET answers them); an 'embed' member's value is such a text. */
  readonly jsonObjectText: (members: readonly JsonMember[]) => Sql;
  /** `[item,item,…]` as text, of the rows of `from` (a FROM … WHERE … clause), each item a JSON text, in `order`. */
  readonly jsonArrayText: (item: Sql, from: Sql, order: Sql) => Sql;
  /** `expr` is one of a list of ids passed as one parameter (`idList` makes its value). */
  readonly inIds: (expr: Sql, ids: unknown) => Sql;
  /** `expr` (text) is one of a list of texts passed as one parameter (`idList` makes its value too). */
  readonly inTexts: (expr: Sql, texts: unknown) => Sql;
  readonly idList: (ids: readonly (number | string)[]) => unknown;
  /**
   * A SELECT of rows passed as one parameter (`rowList` makes its value), a column
   * of each type per row, in the rows' order: a multi-row INSERT of any number of
   * rows has one statement text (prepared once) instead of one per row count.
   * JSON columns take their JSON text.
   */
  readonly selectRows: (rows: unknown, types: readonly FieldType[]) => Sql;
  readonly rowList: (rows: readonly (readonly unknown[])[]) => unknown;
  /**
   * `expr` is one of the values a subquery returns, for the main table of a list:
   * SQLite's `IN` reads the subquery once into a set; PostgreSQL's would probe it
   * through a join for every row it tests, so there it is read once into an array.
   */
  readonly inSubquery: (expr: Sql, subquery: Sql) => Sql;
  /** A row's physical key, which any table has (a sliced delete picks its rows by it). */
  readonly rowKey: Sql;
  /** a and b differ, NULL counting as a value (JSON compares as text). */
  readonly differs: (a: Sql, b: Sql, type: FieldType) => Sql;
  /** `YYYY-MM-DD` of integer year, month and day expressions. */
  readonly dateText: (year: Sql, month: Sql, day: Sql) => Sql;
  /**
   * A value or expression of a given type, where PostgreSQL would not infer it
   * (parameters in select lists or alone under IS NULL, text into a json column).
   */
  readonly cast: (value: unknown, type: 'int' | 'text' | 'json') => Sql;
  /**
   * A write transaction runs alone (SQLite's one writer): the records a filter
   * matches cannot change under it, so its statements may apply the filter again
   * instead of carrying the list of matched ids (which PostgreSQL needs, locked).
   */
  readonly writesAlone: boolean;
  /**
   * A page whose matches are dense is read by walking the table in id order and
   * filtering as it goes. SQLite is told so (`NOT INDEXED`: its planner has no
   * statistics to weigh that walk against the filter's index), or told to walk
   * `index` instead, an index in id order that holds every column the walk tests
   * (ResourceDef.walkIndex, SQLite's only); PostgreSQL walks its primary key by
   * itself (an empty hint), and a first page so walked has a statement without
   * OFFSET, whose plan does not depend on the filter's values, so it is planned once
   * instead of on every call (about 0.4–0.8 ms of W2's page).
   */
  readonly idWalk: (index: string | null) => Sql;
  /** Row lock for the matched records of a write (`t` is the main table's alias). */
  readonly lockMatched: Sql;
  /**
   * A statement that holds a lock named `key` until the transaction ends, so that
   * transactions of all instances touching the same thing take turns (SQLite's
   * write transactions already do).
   */
  readonly lockFor: (key: string) => Sql;
  /** Added to a SELECT … FOR UPDATE of a row one instance at a time works on: other instances pass it over. */
  readonly skipLocked: Sql;
  /**
   * A statement that has the rest of its transaction planned for each execution's
   * values and the tables' sizes at that moment. Work that fills a table as it goes
   * (the reminder run) needs it on PostgreSQL: a prepared statement's generic plan,
   * made while the table was nearly empty, scans the whole table for every row it
   * probes once the table has grown (a 100,000-asset first run took 313 s instead of
   * about 20). SQLite's plans do not weigh table sizes it has no statistics for.
   */
  readonly plansPerExecution: Sql;
  /**
   * The statements that make a table's event triggers (the outbox of events/), after
   * those that drop the ones there were; no parameters in their SQL.
   */
  readonly eventTriggers: (table: EventTable) => readonly Sql[];
  /**
   * An INSERT … SELECT of events of `kind` for the rows of `table` at alias `t` that `from` (FROM … WHERE …) selects;
   * `extra` members follow the record's in each event's data.
   */
  readonly insertEvents: (table: EventTable, kind: EventKind, from: Sql, extra?: readonly JsonMember[]) => Sql;
  readonly isUniqueViolation: (error: unknown) => boolean;
  readonly isForeignKeyViolation: (error: unknown) => boolean;
  /** A failure that retrying the whole transaction can cure (deadlock, serialization). */
  readonly isTransient: (error: unknown) => boolean;
}
