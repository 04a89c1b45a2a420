// What each request leaves behind: one JSON log line (request id, certificate
// fingerprint prefix, session user, endpoint, verb, status, duration) and its share
// of the request metrics. The pipeline notes who called as it finds out; the rest
// is known when the response ends. Nothing from headers or bodies is logged, so no
// credential can reach the log through this line.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { httpDuration, httpInFlight, httpRequests } from '../metrics.ts';

/**
 * Who called, as far as the pipeline got: the endpoint named (one of the API's, so
 * the label set stays bounded), the presented certificate, the client's address,
 * the session's user.
 */
interface Caller { endpoint?: string; fingerprint?: string | null; ip?: string | null; userId?: number }
const callers = new WeakMap<IncomingMessage, Caller>();

/** The pipeline's note of who is calling (for the request's log line). */
export function noteCaller(req: IncomingMessage, caller: Caller): void {
  const known = callers.get(req);
  callers.set(req, known ? Object.assign(known, caller) : { ...caller });
}

/** Enough of the SPKI fingerprint to find the certificate (`client list`), not the whole of it. */
const FINGERPRINT_PREFIX = 16;
const VERBS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
/** Routes of the service itself (the rest is the API's, named by endpoint). */
const ROUTES: Readonly<Record<string, string>> = { '/healthz': 'healthz', '/readyz': 'readyz', '/openapi.json': 'openapi' };

/** Log levels that leave out the request line (info): nothing to build then. */
const QUIET = new Set(['fatal', 'error', 'warn', 'silent']);

export function observeRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    httpInFlight.inc();
    // 'close' comes however the response ends — finished, failed or cut off by the client.
    reply.raw.once('close', () => finished(req, reply));
    done();
  });

  function finished(req: FastifyRequest, reply: FastifyReply): void {
    httpInFlight.dec();
    const caller = callers.get(req.raw);
    const route = req.routeOptions.url;
    // Label values are never the path: a route of the service, an endpoint of the API, or "unknown".
    const endpoint = (route === undefined ? undefined : ROUTES[route]) ?? caller?.endpoint ?? 'unknown';
    const verb = VERBS.has(req.method) ? req.method : 'OTHER';
    const status = reply.raw.statusCode;
    const ms = reply.elapsedTime;
    httpRequests.inc({ endpoint, verb, status });
    httpDuration.observe({ endpoint, verb, status }, ms / 1000);
    if (QUIET.has(req.log.level)) return;
    req.log.info({
      endpoint, verb, url: req.url, status, ms: Math.round(ms * 10) / 10,
      cert: caller?.fingerprint?.slice(0, FINGERPRINT_PREFIX) ?? null, user: caller?.userId ?? null, ip: caller?.ip ?? req.ip,
      ...(reply.raw.writableFinished ? {} : { aborted: true }),
    }, 'request');
  }
}
