// The engine's types: every file of the engine depends on this one, not on the others' types. Types only.
import type { Readable } from 'node:stream';
import type { Database, Db } from '../db/database.ts';
import type { Statement, Values } from '../db/statements.ts';
import type { Condition } from '../filter/compile.ts';
import type { OrderTerm } from '../filter/order.ts';
import type { Clock } from '../model/dates.ts';
import type { Sql, SqlDialect } from '../model/dialect.ts';
import type { JsonObject, JsonValue } from '../model/json.ts';
import type { Principal } from '../model/principal.ts';
import type { Catalog, Level, Need, Reference, ResourceDef, Row, Verb } from '../model/types.ts';
import type { ListColumn } from '../print/list-pdf.ts';
import type { BlobStore } from '../storage/blobs.ts';

// ---- What an operation runs with: the request's context, the registry, the limits, a statement's shape.

/** A reference to a resource from a table that is not itself a resource (certificates, sessions). */
export interface InternalReference {
  readonly table: string;
  /** The name a refusal gives for the referring records, when not the table's (the resource whose rows they are). */
  readonly name?: string;
  readonly column: string;
  readonly resource: string;
  readonly onDelete: Exclude<Reference['onDelete'], 'set-null'>;
}

export interface Registry extends Catalog {
  resource(name: string): Resource | undefined;
  readonly internal: readonly InternalReference[];
}

export interface Limits {
  readonly pageSize: number;
  readonly maxFilters: number;
  readonly maxBatch: number;
  readonly maxJsonDepth: number;
  readonly maxJsonBytes: number;
  readonly maxString: number;
  readonly maxLongString: number;
}

/** Everything an engine operation needs for one request. */
export interface Ctx {
  readonly database: Database;
  readonly catalog: Registry;
  readonly clock: Clock;
  readonly limits: Limits;
  readonly baseUrl: string;
  readonly principal: Principal;
  /** The caller's address as recorded in audit entries. */
  readonly ip: string | null;
  /** Uploaded file content; null where no file can be touched (operator commands). */
  readonly blobs: BlobStore | null;
  /**
   * Keeps the request's reply in the write's transaction (a request with an
   * Idempotency-Key); writes that pass an `answer` to inWriteTx call it.
   */
  readonly seal?: (db: Db, reply: Reply) => Promise<void>;
}

/**
 * What a caller of the endpoints holds for all its requests — the API's pipeline and
 * the portal alike: the store, the resources, the endpoints, the clock, the limits,
 * the base URL of links and the uploaded content. A request adds its principal.
 */
export interface EngineDeps {
  readonly database: Database;
  readonly registry: Registry;
  readonly endpoints: ReadonlyMap<string, Endpoint>;
  readonly clock: Clock;
  readonly limits: Limits;
  readonly baseUrl: string;
  readonly blobs: BlobStore | null;
}

/**
 * What a statement's text depends on besides the query: the dialect, the
 * definitions and the caller's kind. Every statement key starts with `level`.
 */
export interface Shape {
  readonly hooks: SqlDialect;
  readonly catalog: Catalog;
  readonly level: 'basic' | Level;
}

// ---- A resource: its definition plus small hooks for the behaviour that is its own (queue release,
// check-date advance); the engine does everything else. A write in progress.

/** One write transaction in progress. */
export interface WriteTx {
  readonly ctx: Ctx;
  readonly db: Db;
  /** The request's time, as stored datetimes and dates. */
  readonly now: string;
  readonly today: string;
  readonly shape: Shape;
  /** The request's values (PARAMS) for statements. */
  readonly values: Values;
  /** Runs the statement of `key` (built once by `build`) in this transaction, with the request's values and `extra`. */
  run<R = Row>(key: string, build: () => Sql, extra?: Values): Promise<{ rows: R[]; changes: number }>;
  /** A record of `def` in the caller's scope, or null. */
  readonly find: (def: ResourceDef, id: number) => Promise<Row | null>;
  /** Creates a record of another resource in this transaction (checked, audited); returns its id. */
  create(resource: string, values: Row): Promise<number>;
  audit(entry: AuditEntry): void;
  /** Inserts the buffered entries now: entries the database writes itself must come after them. */
  flushAudit(): Promise<void>;
  /**
   * Audit entries recorded under the companies keyed here — those stored and this
   * transaction's — pass to the mapped company (a deleted company's log stays readable).
   */
  passAudit(heirs: ReadonlyMap<number, number>): void;
  /** Runs once the transaction has committed (never if it rolls back). */
  afterCommit(fn: () => Promise<void>): void;
}

export interface Hooks {
  /** Checks a body's values that need no stored record (runs before any record is matched). */
  validate?(ctx: Ctx, values: Row, mode: 'create' | 'update'): void;
  /** May fill in a new record before its references are checked. */
  beforeCreate?(tx: WriteTx, record: Row): Promise<void> | void;
  /** May refuse a checked new record for the state of others (409). */
  beforeInsert?(tx: WriteTx, record: Row): Promise<void> | void;
  /** Runs once new records are inserted: `records` as checked, `ids` theirs in the same order. */
  afterInsert?(tx: WriteTx, records: readonly Row[], ids: readonly number[]): Promise<void> | void;
  /**
   * May adjust `changes` (or refuse) for one matched record. A resource with this
   * hook (or afterUpdate) is updated record by record; others in one statement.
   */
  beforeUpdate?(tx: WriteTx, old: Row, changes: Row): Promise<void> | void;
  /**
   * Columns a set-based update derives per record from its stored values, as SQL
   * over alias `t` (parameters in `values`), for the given changes.
   */
  derive?(tx: WriteTx, changes: Row): Derived | null;
  /** Runs after a record changed; `next` is the stored record now. */
  afterUpdate?(tx: WriteTx, old: Row, next: Row): Promise<void> | void;
  /** May refuse deleting the matched records. */
  beforeDelete?(tx: WriteTx, rows: readonly Row[]): Promise<void> | void;
}

export interface Derived {
  readonly field: string;
  /** Part of the statement's key: what in `changes` shaped the SQL. */
  readonly key: string;
  readonly expr: Sql;
  readonly values: Values;
}

/** A resource's printable list (GET with `Accept: application/pdf`): its title and columns over the records as GET gives them. */
export interface PrintedList {
  readonly title: string;
  /** `today`: the day in the caller's company's time zone (what is overdue depends on it). */
  columns(today: string): readonly ListColumn<JsonObject>[];
}

export interface Resource {
  readonly def: ResourceDef;
  readonly hooks?: Hooks;
  readonly printed?: PrintedList;
}

// ---- Endpoints: a call and its reply.

/** A request's filters as sent: its path segments and its query string's. */
export interface Filters {
  /** Raw path segments after the endpoint name. */
  readonly segments: readonly string[];
  /** The query string's `filter` values as sent (not yet decoded), and `page=<value>` for each `page`, in their order. */
  readonly query: readonly string[];
  /**
   * Groups of path segments of which one must hold, any one (a search over several
   * fields). The service's own callers set it; a request's filters never do.
   */
  readonly anyOf?: readonly (readonly string[])[];
}

export interface Call extends Filters {
  readonly ctx: Ctx;
  readonly verb: Verb;
  readonly orderHeader: string | undefined;
  /** The Accept header: a list answers in the format it prefers (JSON, CSV, or a printed list's PDF). */
  readonly accept: string | undefined;
  /** The parsed JSON body (undefined when empty); throws `malformed_json`. Read it after the filters. */
  json(): JsonValue | undefined;
  /** A PUT's body when it came as text/csv (an import). */
  readonly csv: string | undefined;
  /** `X-Dry-Run: true`: an import checks its rows and writes nothing. */
  readonly dryRun: boolean;
  /** The If-Match header: a POST or DELETE applies only to records as the client saw them. */
  readonly ifMatch: string | undefined;
  /** The unread request body, for endpoints that stream it, and its declared length. */
  readonly stream: Readable;
  readonly contentLength: number | undefined;
}

export interface Pagination { readonly total_pages: number; readonly total_records: number }

export interface Reply {
  readonly status?: number;
  /** The `response` member as JSON text. */
  readonly response: string;
  readonly pagination?: Pagination;
  /** Instead of the envelope: a file's bytes with their headers (downloads). */
  readonly file?: { readonly stream: Readable; readonly headers: Readonly<Record<string, string>> };
}

export type Handler = (call: Call) => Promise<Reply>;

export interface Endpoint {
  readonly name: string;
  readonly handlers: Partial<Record<Verb, Handler>>;
  /** Least session level per verb (missing: admin). */
  readonly access: Partial<Record<Verb, Need>>;
  /** The body is streamed by the handler instead of read (and size-limited) up front. */
  readonly streamsBody?: boolean;
  /** Answers without a session check (login). */
  readonly sessionless?: boolean;
  /** PUT takes a CSV import. */
  readonly csvImport?: boolean;
  /** Its GET reads the primary even when a read replica is configured. */
  readonly readsPrimary?: boolean;
  /** GET answers `Accept: application/pdf` with a printed list. */
  readonly printable?: boolean;
  /** Replaces the level check of `access` (login needs an impersonation certificate instead). */
  authorize?(p: Principal, verb: Verb): void;
}

// ---- Audit entries.

export type AuditAction = 'create' | 'update' | 'delete' | 'login' | 'logout' | 'note';

export interface AuditEntry {
  readonly endpoint: string;
  readonly action: AuditAction;
  readonly message: string;
  readonly recordId: number | null;
  readonly companyId: number | null;
  readonly assetId?: number | null;
  readonly fileId?: number | null;
  readonly olddata?: string;
  readonly newdata?: string;
  /** Overrides the session user (login records the user who logged in). */
  readonly userId?: number | null;
}

export interface AuditSelect {
  readonly olddata: Sql;
  readonly newdata: Sql;
  /** Which rows of `def` (alias `t`) the entries are about. */
  readonly where: Sql;
}

// ---- A parsed query.

export interface Query {
  readonly conditions: readonly Condition[];
  readonly order: readonly OrderTerm[];
  readonly page: number;
}

// ---- Writes, checks and their outcomes.

/** The records a set-based write acts on: a condition on alias `t`, its values, and how many there are. */
export interface Matched {
  readonly count: number;
  /** Part of the key of every statement that uses `where`. */
  readonly key: string;
  readonly where: Sql;
  readonly values: Values;
}

export type Find = (def: ResourceDef, id: number) => Promise<Row | null>;

export interface UpdateResult { readonly updated: number; readonly found: number }

export interface DeleteResult { readonly deleted: number; readonly found: number }

// ---- Lists.

export interface Page {
  readonly total: number;
  /** Each record as JSON text. */
  readonly records: readonly string[];
}

/** Runs a read statement: outside any transaction by default, or on a transaction's connection. */
export type Reader = <R>(statement: Statement, values: Values) => Promise<R[]>;

/** What checking a batch reports: each refusal (else thrown), and each record as its check begins. */
export interface CheckEvents {
  readonly refused?: (index: number, error: unknown) => void;
  readonly checking?: (index: number) => void;
}

export type Precondition =
  /** `If-Match: 3`: every matched record has this version. */
  | { readonly kind: 'version'; readonly sent: string; readonly version: number }
  /** `If-Match: W/"…"`: the matched records are those of the GET that answered one of these tags. */
  | { readonly kind: 'etag'; readonly sent: string; readonly tags: readonly string[] }
  /** `If-Match: *`: some record matches. */
  | { readonly kind: 'any'; readonly sent: string };

// ---- A query's shape (its SQL depends on it, not on its values).

export interface QueryShape {
  /** The key of the filter part (conditions). */
  readonly where: string;
  /** The key of the ordering. */
  readonly order: string;
  readonly conditions: readonly Condition[];
  readonly values: Record<string, unknown>;
}

