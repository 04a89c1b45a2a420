import type { ComputedContext } from '../model/types.ts';
import { PARAMS } from './params.ts';
import type { Principal } from '../model/principal.ts';
import type { Ctx, EngineDeps, Limits, Shape } from './types.ts';

export const DEFAULT_LIMITS: Limits = {
  pageSize: 30, maxFilters: 32, maxBatch: 1000, maxJsonDepth: 32, maxJsonBytes: 64 * 1024, maxString: 1000, maxLongString: 10000,
};

/**
 * The context of one request to the endpoints: the caller's deps, and who asks from
 * where; `database` when the request reads another store than the deps' (a replica).
 */
export const requestContext = (deps: EngineDeps, principal: Principal, ip: string | null,
  o: { readonly seal?: Ctx['seal']; readonly database?: Ctx['database'] } = {}): Ctx => ({
  database: o.database ?? deps.database, catalog: deps.registry, clock: deps.clock, limits: deps.limits, baseUrl: deps.baseUrl,
  principal, ip, blobs: deps.blobs, seal: o.seal,
});

export const shapeOf = (ctx: Ctx): Shape => ({ hooks: ctx.database.hooks, catalog: ctx.catalog, level: ctx.principal.level });

export const computedContext = (s: Shape, alias: string): ComputedContext => ({ alias, hooks: s.hooks, level: s.level, p: PARAMS });
