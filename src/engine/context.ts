import type { Database } from '../db/database.ts';
import { type Clock, formatDate } from '../model/dates.ts';
import type { Principal } from '../model/principal.ts';
import type { Catalog, ComputedContext, Reference } from '../model/types.ts';
import type { BlobStore } from '../storage/blobs.ts';
import type { Resource } from './resource.ts';
import { type Scope, treeScope } from './scope.ts';

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
  /** The caller's scope when already resolved (reads); otherwise the company tree CTE. */
  readonly scope?: Scope;
}

export const scopeOf = (ctx: Ctx): Scope => ctx.scope ?? treeScope(ctx.principal.companyId);

export const computedContext = (ctx: Ctx, alias: string): ComputedContext =>
  ({ alias, hooks: ctx.database.hooks, baseUrl: ctx.baseUrl, principal: ctx.principal, today: formatDate(ctx.clock.now()) });
