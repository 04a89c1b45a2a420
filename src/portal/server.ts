// The portal's own HTTPS listener: the server certificate, no client certificate,
// pages only (the API is never served here, and the API's port never serves these).
import formbody from '@fastify/formbody';
import view from '@fastify/view';
import { Eta } from 'eta';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../errors.ts';
import { type ConnectionLimits, guardConnections, serverTimeouts } from '../http/connections.ts';
import { tlsProfile } from '../tls/profile.ts';
import { brandCss } from './brand-css.ts';
import type { EngineDeps } from './engine.ts';
import { registerPages } from './pages/index.ts';
import { notFoundPage, render } from './render.ts';
import { type Visit, visitOf, visitorAddress } from './visit.ts';
import { formTokenMatches, sameOrigin, SECURITY_HEADERS } from './web.ts';

declare module 'fastify' {
  interface FastifyRequest { visit: Visit }
}

export interface PortalOptions {
  readonly engine: EngineDeps;
  readonly tls: { readonly key: string | Buffer; readonly cert: string | Buffer };
  readonly tlsCiphers?: string;
  /** The API's limits on connections apply to this listener too. */
  readonly connections: ConnectionLimits;
  readonly loginFailuresPerHour: number;
  readonly logLevel?: string;
  readonly logStream?: { write(line: string): void };
}

export interface Portal {
  readonly fastify: FastifyInstance;
  readonly https: https.Server;
}

// Templates and the stylesheet sit beside the sources; this path is the same from src/portal and dist/portal.
const HERE = fileURLToPath(new URL('../../src/portal/', import.meta.url));
const STYLESHEET = readFileSync(`${HERE}assets/portal.css`, 'utf8');
/** A calendar link is its own password: the log shows that one was asked for, not which. */
const withoutFeedToken = (url: string) => url.replace(/^\/calendar\/[^/?]*/, '/calendar/…');
const requestLine = (r: { method: string; url: string; host?: string; ip?: string }) =>
  ({ method: r.method, url: withoutFeedToken(r.url), host: r.host, remoteAddress: r.ip });
const FORM_REFUSED = 'This form has expired or did not come from this site. Nothing was changed; please try again.';

export async function buildPortal(o: PortalOptions): Promise<Portal> {
  const { minVersion, ciphers, honorCipherOrder } = tlsProfile(o.tlsCiphers);
  const fastify = Fastify<https.Server>({
    logger: { level: o.logLevel ?? 'info', redact: ['req.headers.cookie', '*.password', '*.current', '*.new', '*.csrf'], stream: o.logStream,
      serializers: { req: requestLine } },
    bodyLimit: 64 * 1024,
    serverFactory: (handler) => https.createServer({ ...serverTimeouts(o.connections), key: o.tls.key, cert: o.tls.cert, minVersion, ciphers,
      honorCipherOrder }, handler),
  });
  guardConnections(fastify.server, o.connections, null,
    (counts) => fastify.log.warn({ listener: 'portal', ...counts }, 'connections closed by the connection limits so far'));
  await fastify.register(formbody);
  await fastify.register(view, { engine: { eta: new Eta({ views: `${HERE}views`, cache: true }) }, templates: `${HERE}views`, production: true });
  fastify.decorateRequest('visit', null as unknown as Visit);

  fastify.addHook('onRequest', async (req, reply) => {
    void reply.headers(SECURITY_HEADERS);
    req.visit = await visitOf(o.engine, req);
  });
  // A changing request must come from one of our own pages: same origin, and (signed in) the session's form token.
  fastify.addHook('preHandler', async (req, reply) => {
    if (req.method !== 'POST') return;
    const token = (req.body as Record<string, unknown> | undefined)?.csrf;
    const ok = sameOrigin(req.headers) && (req.url === '/login' || (req.visit.token !== null && formTokenMatches(req.visit.token, token)));
    if (!ok) return render(reply, req.visit, 'error', 'Not allowed', 'error', { heading: 'Not allowed', message: FORM_REFUSED }, 403);
  });

  fastify.setErrorHandler(async (error: unknown, req: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) {
      const heading = error.status === 404 ? 'Not found' : error.status === 403 ? 'Not allowed' : 'Not done';
      if (error.headers['retry-after']) void reply.header('retry-after', error.headers['retry-after']);
      return render(reply, req.visit, 'error', heading, 'error', { heading, message: error.message }, error.status);
    }
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 500) req.log.error({ err: error, reference: req.id }, 'portal request failed');
    const message = status >= 500 ? `Internal error, reference ${req.id}` : 'The request could not be read.';
    return render(reply, req.visit ?? { brand: null, ip: visitorAddress(req), principal: null, token: null, companyName: null }, 'error', 'Not done', 'error',
      { heading: 'Not done', message }, status);
  });
  fastify.setNotFoundHandler(async (req, reply) => notFoundPage(reply, req.visit));

  fastify.get('/static/portal.css', async (_req, reply) => reply.header('cache-control', 'max-age=3600').type('text/css; charset=utf-8').send(STYLESHEET));
  // Browsers ask for it by themselves; the portal has none.
  fastify.get('/favicon.ico', async (_req, reply) => reply.code(204).send());
  fastify.get('/brand.css', async (req, reply) => reply.type('text/css; charset=utf-8').send(brandCss(req.visit.brand)));
  fastify.get('/brand/logo', async (req, reply) => {
    const logo = req.visit.brand?.logo;
    return logo ? reply.type(logo.type).send(logo.bytes) : notFoundPage(reply, req.visit);
  });
  registerPages(fastify, { engine: o.engine, loginFailuresPerHour: o.loginFailuresPerHour });

  await fastify.ready();
  return { fastify, https: fastify.server };
}
