// The request values every compiled statement may use, as Params (bound by name
// when the statement runs), and their values for one request.
import type { Sql } from '../model/dialect.ts';
import { Param, type Values } from '../db/statements.ts';
import { formatDate, formatDatetime } from '../model/dates.ts';
import { merged } from '../model/merged.ts';
import type { RequestParams } from '../model/types.ts';
import type { Ctx } from './types.ts';

export const PARAMS: RequestParams = {
  root: new Param('root'), user: new Param('user'), userCompany: new Param('userCompany'), today: new Param('today'),
  now: new Param('now'), baseUrl: new Param('baseUrl'), client: new Param('client'), ip: new Param('ip'),
};

/** The values of PARAMS for a request at instant `t`. */
export function requestValues(ctx: Ctx, t: Date = ctx.clock.now()): Values {
  const { principal: p } = ctx;
  return {
    root: p.companyId, user: p.session?.userId ?? null, userCompany: p.session?.companyId ?? null,
    today: formatDate(t), now: formatDatetime(t), baseUrl: ctx.baseUrl, client: p.clientId, ip: ctx.ip,
  };
}

/** Reads with the statement of `key` (built once by `build`) outside any transaction. */
export function readRows<R>(ctx: Ctx, key: string, build: () => Sql, extra: Values = {}): Promise<R[]> {
  const { database } = ctx;
  return database.read<R>(database.statements.get(`${ctx.principal.level}|${key}`, build), merged(requestValues(ctx), extra));
}
