// One request, forward through the checks in the contract's order:
// certificate (401) → version/endpoint (404) → verb (405) → session (401) →
// access level (403) → body size (413) → filters, ordering, body (400, in the
// endpoint) → state and references (409).
import type { FastifyBaseLogger } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { authenticate } from '../auth/authenticate.ts';
import { presented, type ProxySettings } from '../auth/transport.ts';
import { ApiError, internal, methodNotAllowed, noEndpoint, noVersion, rateLimited, tooLong } from '../errors.ts';
import type { JsonValue } from '../model/json.ts';
import type { Principal } from '../model/principal.ts';
import type { Verb } from '../model/types.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import { parseBody, readBody } from './body.ts';
import { beginKeyed, type Claim, readKey } from './idempotency.ts';
import { errorBody, type RequestBlock, successBody } from './envelope.ts';
import { etagOf, noneMatch } from '../engine/etag.ts';
import { noteCaller } from './observe.ts';
import { merged } from '../model/merged.ts';
import { type ApiPath, splitPath } from './path.ts';
import { requestContext } from '../engine/context.ts';
import type { Call, Endpoint, EngineDeps } from '../engine/types.ts';

/** The one version this API answers to in paths. */
export const PATH_VERSION = '3.0';
const MAX_URL = 8192;
const VERBS: readonly string[] = ['GET', 'POST', 'PUT', 'DELETE'];
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' } as const;
const REPLAYED = { 'idempotent-replayed': 'true' } as const;

/** Sessions and access levels (impersonation mode). */
export interface Impersonation {
  /** The principal to act as: the certificate's, or its session user's (throws bad_session). */
  resolve(principal: Principal, authorization: string | undefined, now: Date): Promise<Principal>;
  /** Throws `forbidden` when the principal's level may not use the verb. */
  authorize(endpoint: Endpoint, verb: Verb, principal: Principal): void;
}

export interface ApiDeps extends EngineDeps {
  readonly bodyMaxBytes: number;
  /** Largest CSV import. */
  readonly importMaxBytes: number;
  readonly proxy: ProxySettings | null;
  readonly impersonation: Impersonation;
  /** Requests per certificate; null when off. */
  readonly rateLimiter: RateLimiter | null;
  /** How long a request waits for another still running with its Idempotency-Key before it is refused (409). */
  readonly idempotencyWaitMs: number;
  /** This process's id in the instances' heartbeat table, carried by its Idempotency-Key claims; null when it keeps none. */
  readonly instance: string | null;
}

export interface ApiResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON envelope, or a file's bytes (download). */
  readonly body: string | Readable;
}

/** The request's own Content-Type is text/csv (headersDistinct is read from the raw headers, which the server leaves alone). */
const isCsv = (req: IncomingMessage) => req.headersDistinct['content-type']?.[0]?.split(';')[0]?.trim().toLowerCase() === 'text/csv';

const allowed = (e: Endpoint) => VERBS.filter((v) => e.handlers[v as Verb]).flatMap((v) => (v === 'GET' ? ['GET', 'HEAD'] : [v]));

export async function handleApi(deps: ApiDeps, req: IncomingMessage, log: FastifyBaseLogger, requestId: string): Promise<ApiResult> {
  const now = deps.clock.now();
  const path = splitPath(req.url ?? '/');
  const sent = req.method ?? 'GET';
  const method = sent.toUpperCase();
  const block: { -readonly [K in keyof RequestBlock]: RequestBlock[K] } = {
    // HEAD answers as GET: the same envelope, so the same Content-Length.
    url: path.raw, endpoint: path.endpoint, version: path.version, method: sent === 'HEAD' ? 'GET' : method,
    timestamp: Math.floor(now.getTime() / 1000), session: null,
  };
  let limits: Record<string, string> = {};
  let claim: Claim | null = null;
  try {
    const { identity, ip } = presented(req, deps.proxy);
    const named = path.version === PATH_VERSION && deps.endpoints.has(path.endpoint) ? path.endpoint : undefined;
    noteCaller(req, { endpoint: named, fingerprint: identity?.fingerprint ?? null, ip });
    // Before any database work, so that a flood costs little. Sessions count against their certificate.
    if (deps.rateLimiter) {
      const { policy } = deps.rateLimiter;
      const decision = deps.rateLimiter.take(identity ? identity.fingerprint : `address ${ip}`);
      limits = rateLimitHeaders(policy, decision);
      if (!decision.allowed) {
        const wait = decision.retryAfterSeconds;
        throw rateLimited(`Rate limit exceeded, retry in ${wait} seconds`, wait);
      }
    }
    let principal = await authenticate(deps.database, identity, now);
    if (path.raw.length > MAX_URL) throw tooLong();
    if (path.version !== PATH_VERSION) throw noVersion(path.version);
    const endpoint = deps.endpoints.get(path.endpoint);
    if (!endpoint) throw noEndpoint(path.endpoint);
    const verb = (method === 'HEAD' ? 'GET' : method) as Verb;
    // Methods are case-sensitive (RFC 9110): `get` is not GET, but a verb the endpoint does not serve.
    const handler = sent === method && VERBS.includes(verb) ? endpoint.handlers[verb] : undefined;
    if (!handler) throw methodNotAllowed(method, endpoint.name, allowed(endpoint));
    if (!endpoint.sessionless) {
      principal = await deps.impersonation.resolve(principal, req.headers.authorization, now);
      block.session = principal.session;
      if (principal.session) noteCaller(req, { userId: principal.session.userId });
    }
    deps.impersonation.authorize(endpoint, verb, principal);
    // A PUT of text/csv is an import, with a limit of its own; any other body is JSON whatever its type.
    const csv = verb === 'PUT' && endpoint.csvImport === true && isCsv(req);
    const raw = !endpoint.streamsBody && (verb === 'POST' || verb === 'PUT')
      ? await readBody(req, req.headers['content-length'], csv ? deps.importMaxBytes : deps.bodyMaxBytes) : Buffer.alloc(0);
    // Not on an upload (its body is streamed, not hashed first) nor a login (its reply is a token, never stored).
    const key = verb !== 'GET' && !endpoint.streamsBody && !endpoint.sessionless ? readKey(req.headersDistinct['idempotency-key']) : null;
    if (key) {
      const keyed = { key, principal, verb, path: normalPath(path), bodyKind: csv ? 'csv' : 'json', body: raw, now };
      const begun = await beginKeyed(deps.database, keyed, deps.idempotencyWaitMs, deps.instance);
      if (begun.kind === 'replay') {
        const { status, answered, response } = begun.reply;
        return { status, headers: merged(limits, REPLAYED, JSON_TYPE), body: successBody(merged(block, { timestamp: answered }), response) };
      }
      claim = begun.claim;
    }
    const database = deps.database.reads && verb === 'GET' && !endpoint.readsPrimary && !conditional(req)
      ? await deps.database.reads.forRead(principalKey(principal)) : deps.database;
    const orderHeader = req.headersDistinct['x-api-result-order']?.join(',');
    let parsed: { value: JsonValue | undefined } | null = null;
    const call: Call = {
      ctx: requestContext(deps, principal, ip, { seal: claim?.sealer(block.timestamp), database }),
      verb, segments: path.segments, query: path.query, orderHeader, accept: req.headers.accept, stream: req,
      contentLength: req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']),
      json: () => (parsed ??= { value: parseBody(raw) }).value,
      csv: csv ? raw.toString('utf8') : undefined,
      dryRun: req.headersDistinct['x-dry-run']?.[0]?.toLowerCase() === 'true',
      ifMatch: req.headersDistinct['if-match']?.join(','),
    };
    const reply = await handler(call);
    // Before the answer: the caller's next GET, on any instance, must see this write.
    if (verb !== 'GET' && !call.dryRun) await deps.database.reads?.wrote(principalKey(principal));
    if (reply.file) return { status: 200, headers: merged(limits, reply.file.headers), body: reply.file.stream };
    const headers: Record<string, string> = Object.assign({}, limits);
    if (verb === 'GET') {
      headers.etag = etagOf(reply.response, reply.pagination);
      if (noneMatch(req.headers['if-none-match'], headers.etag)) return { status: 304, headers, body: '' };
    }
    return { status: reply.status ?? 200, headers: Object.assign(headers, JSON_TYPE), body: successBody(block, reply.response, reply.pagination) };
  } catch (e) {
    const error = e instanceof ApiError ? e : internal(requestId);
    if (!(e instanceof ApiError)) log.error({ err: e, reference: requestId }, 'request failed');
    return { status: error.status, headers: merged(limits, error.headers, JSON_TYPE), body: errorBody(block, error) };
  } finally {
    // A request that kept no reply (refused, failed, or nothing written) lets its key go: a retry runs again.
    await claim?.release().catch((err: unknown) => log.error({ err, reference: requestId }, 'idempotency key not released'));
  }
}

/** Whose writes a read must not be older than: the certificate, and the session's user. */
const principalKey = (p: Principal) => (p.session ? `${p.clientId}:${p.session.userId}` : `${p.clientId}`);
/** A conditional GET is answered from the primary, as every precondition is checked there. */
const conditional = (req: IncomingMessage) => req.headers['if-none-match'] !== undefined || req.headers['if-match'] !== undefined;

/**
 * The path as the endpoint reads it: `/3.0/assets/id=3` however many empty segments it was sent with, and the query's
 * filters after it (`?filter=status%3DActive`); other query parameters (a cache-buster) are not part of the request.
 */
const normalPath = (p: ApiPath) => `/${[p.version, p.endpoint, ...p.segments].join('/')}${p.counted ? `?${p.counted}` : ''}`;
