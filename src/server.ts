// Starting and stopping the service: config → database → migrations → app → listeners.
import { buildApp, type App } from './app.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { openMigrated } from './store.ts';
import { systemClock } from './model/dates.ts';
import { startJobs } from './jobs/schedule.ts';
import { Heartbeat } from './jobs/heartbeat.ts';
import { BlobStore } from './storage/blobs.ts';
import { LISTEN_BACKLOG } from './http/connections.ts';
import { type MetricsListener, startMetricsListener } from './http/metrics-listener.ts';
import { watchPool } from './metrics.ts';
import { serverTls, type ServerTls } from './tls/server-cert.ts';
import type { FastifyBaseLogger } from 'fastify';
import { join } from 'node:path';
import { postgresRateLimits } from './db/rate-limit-store.ts';
import { RateLimiter } from './ratelimit/limiter.ts';
import { redisRateLimits } from './ratelimit/redis-store.ts';

export interface Running {
  readonly app: App;
  readonly database: Database;
  readonly tls: ServerTls;
  /** The Prometheus listener (METRICS_PORT), when configured. */
  readonly metrics: MetricsListener | null;
  /**
   * Stops: readiness fails at once; for `drainMs` the listeners still accept (answers close
   * their connections) so that a balancer sees it and sends elsewhere; then new connections
   * are refused and requests under way finish within SHUTDOWN_GRACE_MS.
   */
  close(drainMs?: number): Promise<void>;
}

/** The rate limiter of: shared through Redis or PostgreSQL when several instances may run, else in process. */
async function rateLimiterFor(config: Config, database: Database, onError: (err: unknown) => void): Promise<RateLimiter | null> {
  if (!config.rateLimit) return null;
  const shared = config.redisUrl ? await redisRateLimits(config.redisUrl, onError) : database.shared ? postgresRateLimits(database) : null;
  return new RateLimiter(config.rateLimit, shared, { onError });
}

const hostForUrl = (host: string) => (host.includes(':') ? `[${host}]` : host);

export async function startServer(config: Config, database?: Database): Promise<Running> {
  let log: FastifyBaseLogger | null = null;
  const db = database ?? (await openMigrated(config, true,
    (err) => log?.warn({ err }, 'read positions could not be kept in Redis; reads go to the primary meanwhile')));
  const tls = serverTls({ certFile: config.tlsCertFile, keyFile: config.tlsKeyFile, dataDir: config.dataDir });
  // Beating before the first request: the Idempotency-Key claims of this instance carry its id.
  const heartbeat = new Heartbeat(db, (err) => log?.warn({ err }, 'the instance heartbeat could not be written'));
  await heartbeat.start();
  const limiter = await rateLimiterFor(config, db,
    (err) => log?.warn({ err }, 'rate limit counters could not be reconciled; each instance limits alone meanwhile'));
  const app = await buildApp({
    database: db, clock: systemClock, tls, baseUrl: config.baseUrl, bodyMaxBytes: config.bodyMaxBytes, importMaxBytes: config.importMaxBytes,
    limits: { pageSize: config.pageSize }, proxy: config.proxy, logLevel: config.logLevel,
    loginFailuresPerHour: config.loginFailuresPerHour,
    blobs: new BlobStore(join(config.dataDir, 'files')), uploadMaxBytes: config.uploadMaxBytes,
    rateLimiter: limiter, tlsCiphers: config.tlsCiphers, connections: config.connections, portal: config.portalPort !== null,
    instance: heartbeat.id, proxyProtocolFrom: config.proxyProtocolFrom,
  });
  log = app.fastify.log;
  // Before the API's port, so that a metrics port in use stops the start before any request is taken.
  const unwatchPool = watchPool(() => db.pool());
  const metrics = config.metrics
    ? await startMetricsListener(config.metrics.host, config.metrics.port, app.probes, (err) => log?.error({ err }, 'metrics could not be collected'))
    : null;
  if (metrics) app.fastify.log.info({ address: metrics.address.address, port: metrics.address.port }, 'metrics listening on plain HTTP (GET /metrics)');
  // Fastify names the address http:// (it does not see the TLS of the server it was given).
  await app.fastify.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG,
    listenTextResolver: (address) => `API listening at ${address.replace(/^http:/, 'https:')} (HTTPS, client certificates)` });
  if (app.portal && config.portalPort !== null) {
    await app.portal.fastify.listen({ port: config.portalPort, host: config.host, backlog: LISTEN_BACKLOG,
      listenTextResolver: (address) => `Portal listening at ${address.replace(/^http:/, 'https:')} (HTTPS, sign in with a username and password)` });
  }
  const plain = app.http;
  if (plain && config.proxy) {
    const { port } = config.proxy;
    await new Promise<void>((r) => plain.listen(port, config.host, LISTEN_BACKLOG, () => r()));
    app.fastify.log.info(`API listening at http://${hostForUrl(config.host)}:${port} (plain HTTP, for the trusted proxies only)`);
  }
  if (tls.created) app.fastify.log.info({ certFile: tls.certFile }, 'created a self-signed server certificate');
  if (config.mail) app.fastify.log.info({ smtp: new URL(config.mail.smtpUrl).host, from: config.mail.from }, 'e-mail on: reminder digests and weekly lists are sent');
  else app.fastify.log.info('e-mail off (SMTP_URL and MAIL_FROM are not set)');
  // Background work takes at most a share of the pool's connections (Database.forBackground).
  const jobs = startJobs({ database: db.forBackground(), clock: systemClock, settings: config, log: app.fastify.log }, app.fastify.log);
  let closing: Promise<void> | null = null;
  const close = (drainMs = 0) => (closing ??= (async () => {
    app.drain();
    if (drainMs > 0) {
      app.fastify.log.info({ drainMs }, 'draining: /readyz answers 503, connections are still accepted');
      await new Promise((r) => setTimeout(r, drainMs));
    }
    // New connections are refused, idle ones closed, requests under way finish (one still arriving on
    // an open connection is served, and its answer closes it) — within the grace period, after which
    // the rest are cut.
    const grace = setTimeout(() => { for (const server of [app.https, plain]) server?.closeAllConnections(); }, config.shutdownGraceMs);
    const stopped = plain ? new Promise<void>((r) => plain.close(() => r())) : null;
    plain?.closeIdleConnections();
    await Promise.all([app.fastify.close(), stopped, jobs.stop()]);
    clearTimeout(grace);
    // No request runs any more: what this instance still claims may be taken over at once.
    await heartbeat.stop();
    await limiter?.close();
    await metrics?.close();
    unwatchPool();
    await db.close();
  })());
  return { app, database: db, tls, metrics, close };
}

/** Stops cleanly on SIGINT/SIGTERM; SIGTERM (a service manager's, or an orchestrator's) drains for `drainMs` first. */
export function closeOnSignals(running: Running, drainMs = 0): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      running.app.fastify.log.info({ signal }, 'shutting down');
      void running.close(signal === 'SIGTERM' ? drainMs : 0).then(() => process.exit(0));
    });
  }
}
