import type { ComputedContext } from '../model/types.ts';
import { PARAMS } from './params.ts';
import type { Ctx, Limits, Shape } from './types.ts';

export const DEFAULT_LIMITS: Limits = {
  pageSize: 30, maxFilters: 32, maxBatch: 1000, maxJsonDepth: 32, maxJsonBytes: 64 * 1024, maxString: 1000, maxLongString: 10000,
};

export const shapeOf = (ctx: Ctx): Shape => ({ hooks: ctx.database.hooks, catalog: ctx.catalog, level: ctx.principal.level });

export const computedContext = (s: Shape, alias: string): ComputedContext => ({ alias, hooks: s.hooks, level: s.level, p: PARAMS });
