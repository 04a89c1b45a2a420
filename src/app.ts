// buildApp: the Fastify application with its listeners created but not started.
// No side effects beyond that, so tests build as many as they like.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { trustedList } from './auth/transport.ts';
import type { Database } from './db/database.ts';
import { DEFAULT_LIMITS, type Limits } from './engine/context.ts';
import type { Endpoint } from './engine/endpoint.ts';
import { handleApi, type Impersonation } from './http/pipeline.ts';
import { openApiDocument } from './http/openapi.ts';
import type { Clock } from './model/dates.ts';
import { createEndpoints, createRegistry } from './resources/registry.ts';

export interface AppOptions {
  readonly database: Database;
  readonly clock: Clock;
  readonly tls: { readonly key: string | Buffer; readonly cert: string | Buffer };
  readonly baseUrl: string;
  readonly bodyMaxBytes?: number;
  readonly limits?: Partial<Limits>;
  readonly proxy?: { readonly trusted: readonly string[]; readonly header: string } | null;
  readonly logLevel?: string;
  readonly extraEndpoints?: readonly Endpoint[];
  readonly impersonation?: Impersonation;
}

export interface App {
  readonly fastify: FastifyInstance;
  /** The mTLS listener (Fastify's own server). */
  readonly https: https.Server;
  /** The plain-HTTP listener for a trusted TLS-terminating proxy, when configured. */
  readonly http: http.Server | null;
}

const TLS_OPTIONS = { requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' } as const;

export async function buildApp(o: AppOptions): Promise<App> {
  let plain: http.Server | null = null;
  const fastify = Fastify({
    logger: { level: o.logLevel ?? 'info', redact: ['req.headers.authorization', 'req.headers["x-ssl-client-cert"]'] },
    requestIdHeader: false,
    genReqId: () => randomBytes(8).toString('hex'),
    return503OnClosing: true,
    // The handshake accepts any client certificate so that a readable 401 can be returned (spec §2.1).
    serverFactory: (handler) => {
      if (o.proxy) plain = http.createServer(handler);
      return https.createServer({ ...TLS_OPTIONS, key: o.tls.key, cert: o.tls.cert }, handler);
    },
    frameworkErrors: (_error, req, reply) => void api(req, reply),
  });

  const registry = createRegistry();
  const endpoints = createEndpoints(o.extraEndpoints);
  const deps = {
    database: o.database, registry, endpoints, clock: o.clock, limits: { ...DEFAULT_LIMITS, ...o.limits },
    baseUrl: o.baseUrl, bodyMaxBytes: o.bodyMaxBytes ?? 1024 * 1024,
    proxy: o.proxy ? { trusted: trustedList(o.proxy.trusted), header: o.proxy.header.toLowerCase() } : null,
    ...(o.impersonation ? { impersonation: o.impersonation } : {}),
  };

  async function api(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const result = await handleApi(deps, req.raw, req.log, String(req.id));
    reply.code(result.status).headers(result.headers).type('application/json; charset=utf-8').send(result.body);
  }

  // Bodies are read by the pipeline after the checks that come before 413, so no parser consumes them.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_req, _payload, done) => done(null));

  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/readyz', async (_req, reply) => {
    try {
      await o.database.db.selectFrom('companies').select('id').limit(1).execute();
      return { status: 'ok' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
  const openapi = JSON.stringify(openApiDocument(registry, endpoints, o.baseUrl));
  fastify.get('/openapi.json', async (_req, reply) => reply.type('application/json; charset=utf-8').send(openapi));
  fastify.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'], url: '/*', exposeHeadRoute: false, handler: api });
  fastify.setNotFoundHandler(api);

  await fastify.ready();
  return { fastify, https: fastify.server as https.Server, http: plain };
}
