// The shape of a resource definition: the one table every layer reads. Types only.
import type { SqlDialect } from './dialect.ts';
import type { EventKind, Side } from './event-table.ts';
import type { FieldType, Sql } from './sql.ts';

/** A value as it travels between the engine and SQL. JSON fields hold canonical JSON text. */
export type SqlValue = string | number | null;
export type Row = Record<string, SqlValue>;

export type { FieldType };

export type Verb = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A session's access level (basic mode has full access within its scope). */
export type Level = 'readonly' | 'user' | 'admin';

/** What a verb needs: a level, or 'creator' (an admin with can_create_companies). */
export type Need = Level | 'creator';

export interface Reference {
  readonly resource: string;
  /** 'same-company': the target must belong to the referring record's company; 'in-scope': anywhere in scope. */
  readonly rule: 'same-company' | 'in-scope';
  /** What deleting the target does to this record ('keep': nothing; the id stays a plain number). */
  readonly onDelete: 'restrict' | 'cascade' | 'set-null' | 'keep';
}

export interface FieldDef {
  readonly name: string;
  readonly type: FieldType;
  readonly nullable?: boolean;
  /** SQL column, when it differs from the name. */
  readonly column?: string;
  /** 'create': settable by PUT only; 'update': by POST only; 'always': both. Absent: read-only. */
  readonly writable?: 'create' | 'update' | 'always';
  readonly required?: boolean;
  /** Value on create when the body does not give one; the texts 'now' and 'today' stand for the clock's. */
  readonly default?: SqlValue;
  readonly maxLength?: number;
  readonly references?: Reference;
  /** JSON field that must hold an object (or null). */
  readonly objectOnly?: boolean;
  /** A JSON field that CSV shows as one column of its JSON text, in export and import (a check's points). */
  readonly csvText?: boolean;
  /** JSON field that holds a list of names (a webhook's events), checked by its resource's hooks. */
  readonly nameList?: boolean;
  readonly format?: 'email' | 'filename';
  /** Set to the current time by every change. */
  readonly touch?: boolean;
  /**
   * The record's version: 1 on create (the column's default), one more
   * with every change to another stored value; shown after the embeds.
   */
  readonly counter?: boolean;
  /** A value computed in SQL instead of read from a column (read-only). */
  readonly computed?: (c: ComputedContext) => Sql;
}

/** The request values a statement may use: parameters, bound when it runs (never SQL text). */
export interface RequestParams {
  /** Root of the caller's scope. */
  readonly root: unknown;
  /** The session's user and that user's company (NULL in basic mode). */
  readonly user: unknown;
  readonly userCompany: unknown;
  /** The request's date (`YYYY-MM-DD`, UTC) and time (`YYYY-MM-DD HH:MM:SS`). */
  readonly today: unknown;
  readonly now: unknown;
  readonly baseUrl: unknown;
  /** The certificate and the address of the caller (audit entries). */
  readonly client: unknown;
  readonly ip: unknown;
}

/** What a computed field's SQL may depend on. */
export interface ComputedContext {
  /** Alias of the table the field belongs to in this query. */
  readonly alias: string;
  readonly hooks: SqlDialect;
  /** The caller's kind, which may change a statement's shape ('basic': a certificate without a session). */
  readonly level: 'basic' | Level;
  readonly p: RequestParams;
}

export interface RelationDef {
  /** Name in responses, filters and ordering (`location`, `parentcompany`). */
  readonly name: string;
  readonly resource: string;
  /** One-to-one: our column holding the target id. */
  readonly via?: string;
  /** One-to-many: the target's column holding our id. */
  readonly back?: string;
  /**
   * Many, through rows of a link table (a check's standards): `from` holds our id,
   * `to` the target's, `position` their order. Filters match when any target
   * matches; lists cannot be ordered on them.
   */
  readonly through?: { readonly table: string; readonly from: string; readonly to: string; readonly position: string };
  /** When the reference is empty: `null`, or an object with every member null. */
  readonly empty: 'null' | 'nulls';
  /** Embedded field list when not the target's full list (the asset short form). */
  readonly fields?: readonly string[];
}

export interface ResourceDef {
  readonly name: string;
  readonly table: string;
  readonly verbs: readonly Verb[];
  /** The column that places a record in a company ('id' for companies themselves). */
  readonly scopeColumn: string;
  readonly fields: readonly FieldDef[];
  readonly relations: readonly RelationDef[];
  /** Sets of columns unique together, checked before writing for a readable 409. */
  readonly unique?: readonly (readonly string[])[];
  /** Fields naming the asset and file an audit entry is about. */
  readonly audit?: { readonly asset?: string; readonly file?: string };
  /** Least session level per verb (basic mode is not limited). */
  readonly access: Readonly<Record<Verb, Need>>;
  /** Fields a session below admin may still set by POST (its own messages' read state). */
  readonly userPost?: readonly string[];
  /** A further condition on which records of the scope the caller sees (alias `t`). */
  readonly visible?: (c: ComputedContext) => Sql | null;
  /**
   * A table of how many records each company has per value of one field (`n` per
   * `company_id` and that field's column), kept by triggers: a list filtered on that
   * field alone counts its total there.
   */
  readonly tally?: { readonly table: string; readonly field: string };
  /**
   * An index of (id, scope column, `fields`…): a page walked in id order reads it
   * instead of the table when every condition tests one of `fields` itself (a hint
   * for SQLite's planner; PostgreSQL's chooses for itself).
   */
  readonly walkIndex?: { readonly name: string; readonly fields: readonly string[] };
  /**
   * Changes to its records are events and in the change feed:
   * `<name>.created|updated|deleted`, and those of its own — `transitions` (a trigger
   * writes them: when, over the old and the new row) and `notices` (a job writes them).
   */
  readonly events?: {
    readonly transitions?: readonly { readonly kind: EventKind; readonly when: (old: Side, row: Side) => Sql }[];
    readonly notices?: readonly string[];
  };
}

/** All resource definitions, by name. */
export interface Catalog {
  readonly lookup: Lookup;
  readonly all: readonly ResourceDef[];
}

/** Resolves a resource by name; the registry implements it. */
export type Lookup = (name: string) => ResourceDef;
