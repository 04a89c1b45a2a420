// What each request leaves behind: one JSON log line (request id, certificate
// fingerprint prefix, session user, endpoint, verb, status, duration) and its share
// of the request metrics. The pipeline notes who called as it finds out; the rest
// is known when the response ends. Nothing from headers or bodies is logged, so no
// credential can reach the log through this line.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpDuration, httpInFlight, httpRequests } from '../metrics.ts';

/**
 * Who called, as far as the pipeline got: the endpoint named (one of the API's, so
 * the label set stays bounded), the presented certificate, the client's address,
 * the session's user.
 */
interface Caller { endpoint?: string; fingerprint?: string | null; ip?: string | null; userId?: number }
/** Kept on the request itself: it lives and goes with the request, in no table of its own. */
const CALLER = Symbol('caller');
type Noted = IncomingMessage & { [CALLER]?: Caller };

/** The pipeline's note of who is calling (for the request's log line). */
export function noteCaller(req: IncomingMessage, caller: Caller): void {
  const noted = req as Noted;
  const known = noted[CALLER];
  noted[CALLER] = Object.assign(known ?? {}, caller);
}

/** Enough of the SPKI fingerprint to find the certificate (`client list`), not the whole of it. */
const FINGERPRINT_PREFIX = 16;
const VERBS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
/** Routes of the service itself (the rest is the API's, named by endpoint). */
const ROUTES: Readonly<Record<string, string>> = { '/healthz': 'healthz', '/readyz': 'readyz', '/openapi.json': 'openapi', '/docs': 'docs',
  '/unsubscribe/:token': 'unsubscribe' };
/** Routes whose path carries a secret: the log line names the route instead. */
const SECRET_PATHS = new Set(['/unsubscribe/:token']);

/** Log levels that leave out the request line (info): nothing to build then. */
const QUIET = new Set(['fatal', 'error', 'warn', 'silent']);

/**
 * Counts the request in flight and, once its response ends — finished, failed or
 * cut off by the client — writes its log line and its share of the metrics.
 * `route` is a route of the service's own (Fastify's); the API's requests are
 * named by the endpoint the pipeline noted.
 */
export function observe(req: IncomingMessage, res: ServerResponse, reqId: string, log: FastifyBaseLogger, route?: string): void {
  const started = performance.now();
  httpInFlight.inc();
  res.once('close', () => {
    httpInFlight.dec();
    const caller = (req as Noted)[CALLER];
    // Label values are never the path: a route of the service, an endpoint of the API, or "unknown".
    const endpoint = (route === undefined ? undefined : ROUTES[route]) ?? caller?.endpoint ?? 'unknown';
    const method = req.method ?? '';
    const verb = VERBS.has(method) ? method : 'OTHER';
    const status = res.statusCode;
    const ms = performance.now() - started;
    httpRequests.inc({ endpoint, verb, status });
    httpDuration.observe({ endpoint, verb, status }, ms / 1000);
    if (QUIET.has(log.level)) return;
    log.info({
      reqId, endpoint, verb, url: route !== undefined && SECRET_PATHS.has(route) ? route : req.url, status, ms: Math.round(ms * 10) / 10,
      cert: caller?.fingerprint?.slice(0, FINGERPRINT_PREFIX) ?? null, user: caller?.userId ?? null, ip: caller?.ip ?? req.socket.remoteAddress ?? null,
      ...(res.writableFinished ? {} : { aborted: true }),
    }, 'request');
  });
}

/** The same for the requests Fastify routes (the service's own paths, and what its router turns away). */
export function observeRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    observe(req.raw, reply.raw, String(req.id), fastify.log, req.routeOptions.url);
    done();
  });
}
