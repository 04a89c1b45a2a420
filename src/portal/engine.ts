// The portal asks the engine exactly what the API would ask it: the same endpoint,
// the same access check, the same handler, with the signed-in user's principal.
// So every rule (scope, access levels, validation, audit) is the API's own, and a
// refusal comes back as the API's error with its message and status.
import { Readable } from 'node:stream';
import { authorize } from '../auth/access.ts';
import { requestContext } from '../engine/context.ts';
import type { EngineDeps, Pagination } from '../engine/types.ts';
import { noEndpoint } from '../errors.ts';
import { allRecords } from '../engine/list.ts';
import { pathFilters, parseQuery } from '../engine/query.ts';
import { parseBody } from '../http/body.ts';
import { hasOwnEndpoint } from '../resources/registry.ts';
import type { Principal } from '../model/principal.ts';
import type { Verb } from '../model/types.ts';

// The pages name it from here (the API's pipeline holds the same, engine/types.ts).
export type { EngineDeps };

/** One question to an endpoint. Filter values are plain text; they are escaped here. */
export interface Ask {
  readonly verb: Verb;
  readonly endpoint: string;
  /** [field + operator, value] pairs, e.g. ['id=', '3'], or a raw segment (a token). */
  readonly filters?: readonly (readonly [string, string] | string)[];
  /** Groups of filters of which any one must hold (a search over several fields). */
  readonly anyOf?: readonly (readonly (readonly [string, string])[])[];
  /** An X-API-Result-Order value. */
  readonly order?: string;
  readonly body?: unknown;
  /** The body as JSON text, when its numbers must reach the engine exactly as typed. */
  readonly bodyText?: string;
  readonly csv?: boolean;
}

export interface Answer<T> {
  readonly status: number;
  readonly response: T;
  readonly pagination?: Pagination;
  readonly file?: { readonly stream: Readable; readonly headers: Readonly<Record<string, string>> };
}

/** Who asks: the principal and the address recorded in audit entries. */
export interface Asker {
  readonly principal: Principal;
  readonly ip: string;
}

/** Throws the API's 403 when the user's level does not allow the verb on the endpoint (before a form is shown). */
export function checkAccess(deps: EngineDeps, who: Asker, verb: Verb, endpoint: string): void {
  const e = deps.endpoints.get(endpoint);
  if (!e) throw noEndpoint(endpoint);
  authorize(e, verb, who.principal);
}

/** Whether the user's level allows the verb on the endpoint (to offer a form only to those it would serve). */
export function mayAsk(deps: EngineDeps, who: Asker, verb: Verb, endpoint: string): boolean {
  try {
    checkAccess(deps, who, verb, endpoint);
    return true;
  } catch {
    return false;
  }
}

const segmentOf = (f: readonly [string, string] | string) => (typeof f === 'string' ? f : `${f[0]}${encodeURIComponent(f[1])}`);

export async function ask<T = unknown>(deps: EngineDeps, who: Asker, q: Ask): Promise<Answer<T>> {
  const endpoint = deps.endpoints.get(q.endpoint);
  const handler = endpoint?.handlers[q.verb];
  if (!endpoint || !handler) throw noEndpoint(q.endpoint);
  authorize(endpoint, q.verb, who.principal);
  const raw = q.bodyText !== undefined ? Buffer.from(q.bodyText) : q.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(q.body));
  const reply = await handler({
    ctx: requestContext(deps, who.principal, who.ip),
    verb: q.verb, segments: (q.filters ?? []).map(segmentOf), query: [], anyOf: q.anyOf?.map((group) => group.map(segmentOf)), orderHeader: q.order, accept: q.csv ? 'text/csv' : undefined,
    stream: Readable.from([]), contentLength: undefined,
    json: () => parseBody(raw), csv: undefined, dryRun: false, ifMatch: undefined,
  });
  if (reply.file) return { status: 200, response: undefined as T, file: reply.file };
  return { status: reply.status ?? 200, response: JSON.parse(reply.response) as T, pagination: reply.pagination };
}

/**
 * Every record a GET of an engine endpoint matches, a batch at a time in id order
 * and without a count: what a whole list (a calendar) reads, in bounded memory.
 */
export async function* askEach<T>(deps: EngineDeps, who: Asker, q: Pick<Ask, 'endpoint' | 'filters' | 'anyOf'>): AsyncGenerator<T[]> {
  const endpoint = deps.endpoints.get(q.endpoint);
  if (!endpoint?.handlers.GET || hasOwnEndpoint(q.endpoint) || !deps.registry.resource(q.endpoint)) throw noEndpoint(q.endpoint);
  authorize(endpoint, 'GET', who.principal);
  const def = deps.registry.lookup(q.endpoint);
  const ctx = {
    database: deps.database, catalog: deps.registry, clock: deps.clock, limits: deps.limits, baseUrl: deps.baseUrl,
    principal: who.principal, ip: who.ip, blobs: deps.blobs,
  };
  const filters = { ...pathFilters(...(q.filters ?? []).map(segmentOf)), anyOf: q.anyOf?.map((group) => group.map(segmentOf)) };
  const query = parseQuery(def, 'GET', filters, undefined, deps.registry.lookup, deps.limits);
  for await (const batch of allRecords(ctx, def, query)) yield batch.map((json) => JSON.parse(json) as T);
}
