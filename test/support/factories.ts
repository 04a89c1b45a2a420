// Shared set-up of the HTTP tests: a service whose clock stands still, with a
// company (and, when asked, a child of it) and a client of a certificate of that
// company. A test file builds its world with one call instead of its own before
// block; what it adds on top (more companies, records) it makes itself.
import type { TestClient } from './client.ts';
import { type DbKind, type Service, startService } from './harness.ts';

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

/** A company of the service (under `parent`, when given); its id. */
export const buildCompany = (svc: Service, name: string, parent: number | null = null): Promise<number> => svc.company(name, parent);

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
