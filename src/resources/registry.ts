// Every endpoint of the API and every resource definition, in one table.
import type { Database } from '../db/database.ts';
import { DEFAULT_LIMITS } from '../engine/context.ts';
import { type Clock, systemClock } from '../model/dates.ts';
import { resourceEndpoint } from '../engine/endpoint.ts';
import type { ResourceDef } from '../model/types.ts';
import { assetchecks } from './assetchecks.ts';
import { assetqueue } from './assetqueue.ts';
import { assetreminders } from './assetreminders.ts';
import { assets } from './assets.ts';
import { auditlog, auditlogEndpoint } from './auditlog.ts';
import { changesEndpoint, changesResource } from './changes.ts';
import { companies } from './companies.ts';
import { departments, locations } from './departments.ts';
import { endpointsEndpoint } from './endpoints.ts';
import { externaltypes } from './externaltypes.ts';
import { files } from './files.ts';
import { loginEndpoint } from './login.ts';
import { logoutEndpoint } from './logout.ts';
import { messages } from './messages.ts';
import { metadataEndpoint } from './metadata.ts';
import { moveassetEndpoint } from './moveasset.ts';
import { passwordEndpoint } from './password.ts';
import { randompasswordEndpoint } from './randompassword.ts';
import { uploadEndpoint } from './upload.ts';
import { users } from './users.ts';
import { webhookdeliveries } from './webhookdeliveries.ts';
import { webhooks, webhooksEndpoint } from './webhooks.ts';
import type { BlobStore } from '../storage/blobs.ts';
import type { Ctx, Endpoint, InternalReference, Registry, Resource } from '../engine/types.ts';

const RECORDS: readonly Resource[] = [
  assetchecks, assetqueue, assetreminders, assets, auditlog, companies, departments, externaltypes, files, locations, messages, users, webhooks,
  webhookdeliveries,
];
/** The change feed over the resources whose changes are events. */
const changes = changesResource(RECORDS.filter((r) => r.def.events).map((r) => r.def));

export const RESOURCES: readonly Resource[] = [...RECORDS, changes];

/** The resources whose endpoint is not the engine's plain one (their PUT, their GET or their answers are their own). */
const OWN_ENDPOINTS: ReadonlyMap<Resource, Endpoint> = new Map([
  [auditlog, auditlogEndpoint], [webhooks, webhooksEndpoint], [changes, changesEndpoint(changes)],
]);

/** Whether a resource's endpoint is its own rather than the engine's plain one (the CLI imports only into the latter). */
export const hasOwnEndpoint = (name: string): boolean => [...OWN_ENDPOINTS.keys()].some((r) => r.def.name === name);

/** Tables outside the resource list that refer to resources. */
const INTERNAL: readonly InternalReference[] = [
  { table: 'assetcheck_standards', column: 'check_id', resource: 'assetchecks', onDelete: 'cascade' },
  { table: 'assetcheck_standards', column: 'asset_id', resource: 'assets', onDelete: 'restrict', name: 'assetchecks' },
  { table: 'calendar_feeds', column: 'user_id', resource: 'users', onDelete: 'cascade' },
  { table: 'clients', column: 'company_id', resource: 'companies', onDelete: 'restrict' },
  { table: 'message_reads', column: 'message_id', resource: 'messages', onDelete: 'cascade' },
  { table: 'message_reads', column: 'user_id', resource: 'users', onDelete: 'cascade' },
  { table: 'sessions', column: 'user_id', resource: 'users', onDelete: 'cascade' },
  { table: 'sessions', column: 'company_id', resource: 'companies', onDelete: 'cascade' },
  { table: 'webhook_deliveries', column: 'webhook_id', resource: 'webhooks', onDelete: 'cascade' },
];

export function createRegistry(resources: readonly Resource[] = RESOURCES, internal = INTERNAL): Registry {
  const byName = new Map(resources.map((r) => [r.def.name, r]));
  return {
    all: resources.map((r) => r.def),
    internal,
    resource: (name) => byName.get(name),
    lookup(name): ResourceDef {
      const r = byName.get(name);
      if (!r) throw new Error(`unknown resource ${name}`);
      return r.def;
    },
  };
}

export interface EndpointSettings {
  readonly loginFailuresPerHour: number;
  readonly blobs: BlobStore;
  readonly uploadMaxBytes: number;
}

export function createEndpoints(settings: EndpointSettings, extra: readonly Endpoint[] = []): ReadonlyMap<string, Endpoint> {
  const list: Endpoint[] = [
    endpointsEndpoint,
    ...RESOURCES.map((r) => OWN_ENDPOINTS.get(r) ?? resourceEndpoint(r)),
    loginEndpoint(settings.loginFailuresPerHour),
    logoutEndpoint,
    passwordEndpoint,
    randompasswordEndpoint,
    uploadEndpoint(settings.blobs, settings.uploadMaxBytes),
    metadataEndpoint,
    moveassetEndpoint,
    ...extra,
  ];
  return new Map(list.map((e) => [e.name, e]));
}

/** The engine context of the operator (CLI, jobs): full access to a company's tree, audited without a certificate. */
export function operatorContext(database: Database, companyId: number, clock: Clock = systemClock): Ctx {
  return {
    database, catalog: createRegistry(), clock, limits: DEFAULT_LIMITS, baseUrl: '', ip: null, blobs: null,
    principal: { clientId: null, clientCompanyId: companyId, impersonation: false, companyId, session: null, level: 'basic', canCreateCompanies: true },
  };
}
