// buildApp: the Fastify application with its listeners created but not started.
// No side effects beyond that, so tests build as many as they like.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { authorize } from './auth/access.ts';
import { resumeSession, tokenFrom } from './auth/sessions.ts';
import { type Trust, trustOf } from './auth/forwarded.ts';
import { presented } from './auth/transport.ts';
import type { Database } from './db/database.ts';
import { DEFAULT_LIMITS } from './engine/context.ts';
import { clientErrorHandler, connectHandler, http1Only, type UnroutedAnswer } from './http/client-error.ts';
import { type ConnectionCounts, type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, guardConnections, serverTimeouts } from './http/connections.ts';
import { answerEarly, continueOnRead } from './http/early-answer.ts';
import { type ApiResult, handleApi, type Impersonation } from './http/pipeline.ts';
import { observeRequests } from './http/observe.ts';
import { readProxyHeaders } from './http/proxy-listener.ts';
import { type Probes, probes as makeProbes } from './http/probes.ts';
import { apiListener } from './http/serve-api.ts';
import { watchConnections } from './metrics.ts';
import { openApiDocument } from './http/openapi.ts';
import { referencePage } from './http/reference.ts';
import type { Clock } from './model/dates.ts';
import type { RateLimiter } from './ratelimit/limiter.ts';
import { BlobStore } from './storage/blobs.ts';
import { tlsProfile } from './tls/profile.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEndpoints, createRegistry } from './resources/registry.ts';
import type { Endpoint, Limits } from './engine/types.ts';
import { buildPortal, type Portal } from './portal/server.ts';
import { unsubscribeRoutes } from './http/unsubscribe.ts';

export interface AppOptions {
  readonly database: Database;
  readonly clock: Clock;
  readonly tls: { readonly key: string | Buffer; readonly cert: string | Buffer };
  readonly baseUrl: string;
  readonly bodyMaxBytes?: number;
  readonly importMaxBytes?: number;
  readonly limits?: Partial<Limits>;
  readonly proxy?: { readonly trusted: readonly string[]; readonly header: string } | null;
  readonly logLevel?: string;
  /** Where log lines go (default: stdout); tests read them to show no secret is logged. */
  readonly logStream?: { write(line: string): void };
  readonly extraEndpoints?: readonly Endpoint[];
  readonly loginFailuresPerHour?: number;
  /** Where uploaded content is kept (the server uses DATA_DIR/files; default: a temporary directory). */
  readonly blobs?: BlobStore;
  readonly uploadMaxBytes?: number;
  /** Timeouts and caps of connections (default: DEFAULT_CONNECTION_LIMITS). */
  readonly connections?: Partial<ConnectionLimits>;
  /** OpenSSL cipher list replacing the default profile's (src/tls/profile.ts). */
  readonly tlsCiphers?: string;
  /** Requests per certificate; none when absent. The caller closes it. */
  readonly rateLimiter?: RateLimiter | null;
  /** How long a request waits for another still running with its Idempotency-Key (default 5 s) before 409. */
  readonly idempotencyWaitMs?: number;
  /** Also build the company portal's listener (not started). */
  readonly portal?: boolean;
  /** Addresses and CIDRs of balancers whose connections to the API's port begin with a PROXY protocol header. */
  readonly proxyProtocolFrom?: readonly string[];
  /** This process's id in the instances' heartbeat table, which its Idempotency-Key claims carry (none: claims expire by their lease only). */
  readonly instance?: string | null;
}

export interface App {
  readonly fastify: FastifyInstance;
  /** The mTLS listener (Fastify's own server). */
  readonly https: https.Server;
  /** The plain-HTTP listener for a trusted TLS-terminating proxy, when configured. */
  readonly http: http.Server | null;
  /** The company portal (its own HTTPS listener, no client certificate), when asked for. */
  readonly portal: Portal | null;
  /** Liveness and readiness, as /healthz and /readyz answer them (the metrics listener asks them too). */
  readonly probes: Probes;
  /**
   * The shutdown begins: readiness fails from now on, and every answer closes its
   * connection, so that a balancer stops sending and clients move to another instance.
   */
  drain(): void;
}

/** Paths Fastify serves (registered below); every other request goes to the API's pipeline directly. */
const SERVICE_ROUTES = new Set(['/healthz', '/readyz', '/openapi.json', '/docs']);
const pathOf = (url = '/') => { const q = url.indexOf('?'); return q < 0 ? url : url.slice(0, q); };
const serviceRoute = (path: string) => SERVICE_ROUTES.has(path) || path.startsWith('/unsubscribe/');

/** Request ids (logs, 500 references): unique per process by a random prefix, cheap by a counter. */
const REQUEST_PREFIX = randomBytes(4).toString('hex');
let requestCounter = 0;
/** Credentials never reach the log, should any log call carry a header or a body (the request line carries neither). */
const LOG_REDACT = ['req.headers.authorization', 'headers.authorization', '*.password', '*.new_password', '*.user_token', '*.token', '*.secret'];
const nextRequestId = () => `${REQUEST_PREFIX}${(++requestCounter).toString(16).padStart(8, '0')}`;

/**
 * What Node's HTTP servers would answer themselves, the service answers as the
 * contract says: an `Expect` other than 100-continue (the published PHP client
 * sends an empty one) is ignored rather than met with a bodiless 417
 * (RFC 9110 lets a server); a request without Host is served (nothing here reads
 * it) rather than met with a bodiless 400; CONNECT, which Node hands to no
 * request handler, gets the pipeline's 401/404/405.
 */
function answerAll<S extends http.Server>(server: S, handler: http.RequestListener, unrouted: UnroutedAnswer): S {
  server.on('checkExpectation', handler);
  // 100 Continue only once the body is read: a request refused before gets the refusal instead.
  server.on('checkContinue', continueOnRead(handler));
  server.on('connect', connectHandler(unrouted));
  return server;
}

/** Reads PROXY headers on a listener's connections from `from`, refusals logged at most once every ten seconds. */
function proxyProtocolReader(from: Trust, log: () => FastifyBaseLogger, timeoutMs: number) {
  let refused = 0;
  let lastReport = 0;
  return (server: https.Server) => readProxyHeaders(server, { from, timeoutMs, onRefused: (address, reason) => {
    // (A balancer set up without send-proxy would have every connection refused.)
    refused++;
    if (Date.now() - lastReport < 10_000) return;
    lastReport = Date.now();
    log().warn({ address, reason, refusedSoFar: refused }, 'connection refused by the PROXY protocol rules');
  } });
}

export async function buildApp(o: AppOptions): Promise<App> {
  let plain: http.Server | null = null;
  // Draining (a shutdown has begun) or closing (the listeners are closing): answers close their connections.
  let draining = false;
  let closing = false;
  const connections = { ...DEFAULT_CONNECTION_LIMITS, ...o.connections };
  const fastify = Fastify({
    // Request logs never carry headers; should a serializer add them, credentials stay out.
    logger: { level: o.logLevel ?? 'info', redact: [...LOG_REDACT, `req.headers["${(o.proxy?.header ?? 'x-ssl-client-cert').toLowerCase()}"]`], stream: o.logStream },
    // One line per request instead of Fastify's two, with who called (http/observe.ts).
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: nextRequestId,
    // A request that still arrives on an open connection while the server closes is served (its answer
    // closes the connection): the shutdown waits for it within its grace period anyway.
    return503OnClosing: false,
    serverFactory: (fastifyHandler) => {
      // The service's own routes go through Fastify; every other request is the API's (http/serve-api.ts).
      const route: http.RequestListener = (req, res) => {
        if (draining || closing) res.setHeader('connection', 'close');
        if (serviceRoute(pathOf(req.url))) fastifyHandler(req, res);
        else answerApi(req, res);
      };
      // Early refusals (413 …) reach a client still sending its body (http/early-answer.ts).
      const handler = answerEarly(http1Only(route));
      const options = { requireHostHeader: false, ...serverTimeouts(connections) };
      if (o.proxy) plain = answerAll(http.createServer(options, handler), handler, unrouted);
      return answerAll(https.createServer({ ...options, ...tlsProfile(o.tlsCiphers), key: o.tls.key, cert: o.tls.cert }, handler),
        handler, unrouted);
    },
    frameworkErrors: (_error, req, reply) => void api(req, reply),
    // A request line refused only for its method still gets the pipeline's 401/404/405.
    clientErrorHandler: clientErrorHandler(unrouted),
  });

  // Fastify handles parser refusals on its own listener only; the proxy listener answers alike.
  (plain as http.Server | null)?.on('clientError', clientErrorHandler(unrouted));
  const report = (listener: string) => (counts: ConnectionCounts) =>
    fastify.log.warn({ listener, ...counts }, 'connections closed by the connection limits so far');
  watchConnections('https', guardConnections(fastify.server, connections, null, report('https')), fastify.server);
  // The PROXY protocol on the listeners a balancer in TCP mode fronts: the API's, and the portal's (below).
  const proxyProtocol = o.proxyProtocolFrom && o.proxyProtocolFrom.length > 0
    ? proxyProtocolReader(trustOf(o.proxyProtocolFrom), () => fastify.log, connections.handshakeTimeoutMs) : null;
  proxyProtocol?.(fastify.server);
  // Behind a proxy every request comes from its address: the proxies have no cap of their own.
  const trusted = o.proxy ? trustOf(o.proxy.trusted) : null;
  if (plain && trusted) watchConnections('http', guardConnections(plain, connections, trusted, report('http')), plain);

  const registry = createRegistry();
  const blobs = o.blobs ?? new BlobStore(join(tmpdir(), `asset-tracker-files-${process.pid}`));
  const endpoints = createEndpoints({ loginFailuresPerHour: o.loginFailuresPerHour ?? 100, blobs,
    uploadMaxBytes: o.uploadMaxBytes ?? 25 * 1024 * 1024 }, o.extraEndpoints);
  const impersonation: Impersonation = {
    resolve: (p, header, now) => (header === undefined ? Promise.resolve(p) : resumeSession(o.database, p, tokenFrom(header), now)),
    authorize,
  };
  const deps = {
    database: o.database, registry, endpoints, clock: o.clock, limits: { ...DEFAULT_LIMITS, ...o.limits },
    baseUrl: o.baseUrl, bodyMaxBytes: o.bodyMaxBytes ?? 1024 * 1024, importMaxBytes: o.importMaxBytes ?? 100 * 1024 * 1024,
    proxy: o.proxy && trusted ? { trusted, header: o.proxy.header.toLowerCase() } : null,
    impersonation,
    blobs,
    rateLimiter: o.rateLimiter ?? null,
    idempotencyWaitMs: o.idempotencyWaitMs ?? 5000,
    instance: o.instance ?? null,
  };

  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const answerApi = apiListener({ deps, log: fastify.log, nextId: nextRequestId });
  const probes = makeProbes(o.database, () => draining || closing);

  function unrouted(req: http.IncomingMessage): Promise<ApiResult> {
    const id = nextRequestId();
    const log: FastifyBaseLogger = fastify.log;
    log.info({ reqId: id, method: req.method, url: req.url }, 'request with a method the HTTP parser does not route');
    return handleApi(deps, req, log, id);
  }

  async function api(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const result = await handleApi(deps, req.raw, req.log, String(req.id));
    // Returning the reply lets Fastify finish a streamed body (downloads) before it settles.
    // A 304 has no body, so no Content-Type either.
    return reply.code(result.status).headers(result.headers).send(result.status === 304 ? undefined : result.body);
  }

  // Bodies are read by the pipeline after the checks that come before 413, so no parser consumes them.
  // JSON is JSON whatever the Content-Type says, so Fastify never judges the header:
  // one it cannot parse would otherwise be refused with 415 before the certificate is checked.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_req, _payload, done) => done(null));
  // (Also where there was none: Fastify refuses a body method without one, QUERY, with a body of its own.)
  observeRequests(fastify);
  fastify.addHook('onRequest', (req, _reply, done) => {
    req.headers['content-type'] = 'application/octet-stream';
    done();
  });

  fastify.get('/healthz', async (_req, reply) => {
    const { code, body } = probes.live();
    return reply.code(code).send(body);
  });
  fastify.get('/readyz', async (_req, reply) => {
    const { code, body } = await probes.ready();
    return reply.code(code).send(body);
  });
  unsubscribeRoutes(fastify, { database: o.database, clock: o.clock, ipOf: (req) => presented(req, deps.proxy).ip });
  const document = openApiDocument(registry, endpoints, o.baseUrl, deps.limits);
  const openapi = JSON.stringify(document);
  fastify.get('/openapi.json', async (_req, reply) => reply.type('application/json; charset=utf-8').send(openapi));
  // The reference page (2 MB) is made when first asked for, not by every app a test builds.
  let reference: string | undefined;
  fastify.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').send(reference ??= referencePage(document)));
  // Another verb on a route of the service's own is the API's to answer (404 no_version).
  fastify.setNotFoundHandler(api);

  // Fastify closes a factory-made server only when it started it with listen();
  // an embedder (the tests) that listens on `app.https` directly must see close() end it too.
  fastify.addHook('onClose', async () => {
    for (const server of [fastify.server, plain]) {
      if (server?.listening) await new Promise<void>((r) => server.close(() => r()));
    }
  });

  // The portal asks the same engine with the same registry, endpoints, clock, limits and files (the API's EngineDeps).
  const portal = o.portal
    ? await buildPortal({
      engine: deps,
      tls: o.tls, tlsCiphers: o.tlsCiphers, connections, loginFailuresPerHour: o.loginFailuresPerHour ?? 100, logLevel: o.logLevel, logStream: o.logStream,
    })
    : null;
  if (portal) {
    proxyProtocol?.(portal.https);
    fastify.addHook('onClose', async () => {
      await portal.fastify.close();
      // As for the API's listener below: an embedder may have listened on the server itself.
      if (portal.https.listening) await new Promise<void>((r) => portal.https.close(() => r()));
    });
  }

  await fastify.ready();
  return { fastify, https: fastify.server, http: plain, portal, probes, drain: () => { draining = true; } };
}
