import type { Database, Db } from '../db/database.ts';
import type { SqlDialect } from '../model/dialect.ts';
import type { Clock } from '../model/dates.ts';
import type { Principal } from '../model/principal.ts';
import type { Catalog, ComputedContext, Level, Reference } from '../model/types.ts';
import type { BlobStore } from '../storage/blobs.ts';
import type { Reply } from './endpoint.ts';
import { PARAMS } from './params.ts';
import type { Resource } from './resource.ts';

/** A reference to a resource from a table that is not itself a resource (certificates, sessions). */
export interface InternalReference {
  readonly table: string;
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

export const DEFAULT_LIMITS: Limits = {
  pageSize: 30, maxFilters: 32, maxBatch: 1000, maxJsonDepth: 32, maxJsonBytes: 64 * 1024, maxString: 1000, maxLongString: 10000,
};

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
   * Idempotency-Key, spec §14.1); writes that pass an `answer` to inWriteTx call it.
   */
  readonly seal?: (db: Db, reply: Reply) => Promise<void>;
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

export const shapeOf = (ctx: Ctx): Shape => ({ hooks: ctx.database.hooks, catalog: ctx.catalog, level: ctx.principal.level });

export const computedContext = (s: Shape, alias: string): ComputedContext => ({ alias, hooks: s.hooks, level: s.level, p: PARAMS });
