// Shared set-up of the tests, so that a test file builds its world in a call or
// two instead of its own before block. The HTTP tests: a service whose clock stands
// still, with a company (and, when asked, a child of it) and a client of a
// certificate of that company. The CLI tests: a stage's store migrated as `serve`
// migrates it, its companies and registered certificates made as the operator's
// commands make them (in this process: the CLI's own tests cover those commands),
// and a running `serve` once it answers. What a test adds on top it makes itself.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addClient, addCompany } from '../../src/admin/accounts.ts';
import type { Database } from '../../src/db/database.ts';
import { prepareStore } from '../../src/store.ts';
import { createSelfSigned } from '../../src/tls/x509.ts';
import { selfSigned, type TestCert } from './certs.ts';
import type { TestClient } from './client.ts';
import { type DbKind, type Service, startService } from './harness.ts';
import { openStageDatabase, Server, type Stage } from './stage.ts';

export type StartOptions = Parameters<typeof startService>[1];

/** A fresh service whose clock stands still on a whole second (certificates stay valid: it is real time). */
export async function startStill(kind: DbKind, options: StartOptions = {}): Promise<Service> {
  const svc = await startService(kind, options);
  svc.clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
  return svc;
}

/** Stops the service (nothing when it never started). */
export async function stopService(svc: Service | undefined): Promise<void> {
  await svc?.close();
}

/** A company of a service, or of a store the test opened (under `parent`, when given); its id. */
export function buildCompany(on: Service | Database, name: string, parent: number | null = null): Promise<number> {
  return 'company' in on ? on.company(name, parent) : addCompany(on, name, parent);
}

/** A client of a new certificate registered to `company`, and that certificate's id. */
export async function buildClient(svc: Service, company: number, o: { impersonation?: boolean } = {}): Promise<{ api: TestClient; clientId: number }> {
  const { client, info } = await svc.certificate(company, o);
  return { api: client, clientId: info.id };
}

export interface Tenancy {
  readonly svc: Service;
  /** The company the client's certificate belongs to. */
  readonly top: number;
  readonly api: TestClient;
  readonly clientId: number;
}

interface TenancyOptions { readonly top?: string; readonly start?: StartOptions }

/**
 * A still-clock service with a company named `top` ('Top'), a child of it named `child` when
 * given (made before the certificate, as the tests always did), and a client of a certificate of the top company.
 */
export async function buildTenancy(kind: DbKind, o?: TenancyOptions): Promise<Tenancy>;
export async function buildTenancy(kind: DbKind, o: TenancyOptions & { readonly child: string }): Promise<Tenancy & { readonly child: number }>;
export async function buildTenancy(kind: DbKind, o: TenancyOptions & { readonly child?: string } = {}): Promise<Tenancy & { readonly child?: number }> {
  const svc = await startStill(kind, o.start);
  const top = await buildCompany(svc, o.top ?? 'Top');
  const child = o.child === undefined ? undefined : await buildCompany(svc, o.child, top);
  const { api, clientId } = await buildClient(svc, top);
  return { svc, top, api, clientId, ...(child === undefined ? {} : { child }) };
}

// ---------------------------------------------------------------------------------------------
// The CLI tests: a stage's store and a running `serve`.

/** Runs `fn` on the stage's store, migrated (and its triggers made) as `serve` does it; closed after. */
export async function withStore<T>(stage: Stage, fn: (database: Database) => Promise<T>): Promise<T> {
  const database = openStageDatabase(stage);
  try {
    await prepareStore(database);
    return await fn(database);
  } finally {
    await database.close();
  }
}

/** A certificate (common name `name`) registered to `company` as `client add` registers it: its PEMs, client id and fingerprint. */
export async function buildCertificate(database: Database, company: number, name: string,
  o: { impersonation?: boolean } = {}): Promise<TestCert & { readonly id: number; readonly fingerprint: string }> {
  const cert = selfSigned(name);
  const { id, fingerprint } = await addClient(database, { companyId: company, certPem: cert.certPem, impersonation: o.impersonation });
  return { ...cert, id, fingerprint };
}

/** A server certificate for localhost written into the stage, and the environment that has `serve` use it. */
export function buildServerTls(stage: Stage): { readonly env: Record<string, string>; readonly certPem: string } {
  const tls = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'] });
  const files = { TLS_CERT_FILE: join(stage.dir, 'server.pem'), TLS_KEY_FILE: join(stage.dir, 'server.key') };
  writeFileSync(files.TLS_CERT_FILE, tls.certPem);
  writeFileSync(files.TLS_KEY_FILE, tls.keyPem);
  return { env: files, certPem: tls.certPem };
}

/** A stage ready to serve: its server certificate on disk, a migrated store with one company and one registered certificate. */
export interface Served {
  /** The environment of its `serve` (TLS files, no rate limit, and what the caller added). */
  readonly env: Record<string, string>;
  readonly serverPem: string;
  /** The registered client certificate. */
  readonly cert: TestCert;
}

export async function prepareServe(stage: Stage, certName: string, env: Record<string, string> = {}): Promise<Served> {
  const tls = buildServerTls(stage);
  const cert = await withStore(stage, async (database) => buildCertificate(database, await buildCompany(database, 'Top'), certName));
  return { env: { ...tls.env, RATE_LIMIT: '0', ...env }, serverPem: tls.certPem, cert };
}

/**
 * A `serve` of the stage (with `env` added to the stage's), once it answers over TLS; its
 * `client(cert)` trusts its certificate. Killed when it never comes up.
 */
export async function startServe(stage: Stage, o: { readonly env?: Record<string, string> } = {}): Promise<Server> {
  const server = await Server.start(stage, 'serve', o.env);
  try {
    await server.waitUntilReady();
  } catch (e) {
    await server.dispose();
    throw e;
  }
  return server;
}
