// Starting and stopping the service: config → database → migrations → app → listeners.
import { buildApp, type App } from './app.ts';
import type { Config } from './config.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { systemClock } from './model/dates.ts';
import { startJobs } from './jobs/schedule.ts';
import { BlobStore } from './storage/blobs.ts';
import { serverTls, type ServerTls } from './tls/server-cert.ts';
import { join } from 'node:path';

export interface Running {
  readonly app: App;
  readonly database: Database;
  readonly tls: ServerTls;
  close(): Promise<void>;
}

export async function openMigrated(config: Config): Promise<Database> {
  const database = openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize });
  await migrate(database.db);
  return database;
}

export async function startServer(config: Config, database?: Database): Promise<Running> {
  const db = database ?? (await openMigrated(config));
  const tls = serverTls({ certFile: config.tlsCertFile, keyFile: config.tlsKeyFile, dataDir: config.dataDir });
  const app = await buildApp({
    database: db, clock: systemClock, tls, baseUrl: config.baseUrl, bodyMaxBytes: config.bodyMaxBytes,
    limits: { pageSize: config.pageSize }, proxy: config.proxy, logLevel: config.logLevel,
    loginFailuresPerHour: config.loginFailuresPerHour,
    blobs: new BlobStore(join(config.dataDir, 'files')), uploadMaxBytes: config.uploadMaxBytes,
  });
  await app.fastify.listen({ port: config.port, host: config.host });
  const plain = app.http;
  if (plain && config.proxy) await new Promise<void>((r) => plain.listen(config.proxy!.port, config.host, () => r()));
  if (tls.created) app.fastify.log.info({ certFile: tls.certFile }, 'created a self-signed server certificate');
  const jobs = startJobs(db, systemClock, config.reminderIntervalMs, app.fastify.log);
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= (async () => {
    jobs.stop();
    if (plain) await new Promise<void>((r) => plain.close(() => r()));
    await app.fastify.close();
    await db.close();
  })());
  return { app, database: db, tls, close };
}

/** Stops cleanly on SIGINT/SIGTERM. */
export function closeOnSignals(running: Running): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      running.app.fastify.log.info({ signal }, 'shutting down');
      void running.close().then(() => process.exit(0));
    });
  }
}
