// Basic mode: a registered, non-revoked, self-signed certificate
// inside its validity period grants its company's scope. Every failure reads the
// same, naming the fingerprint that was presented.
import { findActiveClient } from '../db/clients.ts';
import type { Database } from '../db/database.ts';
import { noAccess } from '../errors.ts';
import type { Principal } from '../model/principal.ts';
import { type CertificateIdentity, isCurrent } from './certificate.ts';

export async function authenticate(database: Database, identity: CertificateIdentity | null, now: Date): Promise<Principal> {
  if (!identity) throw noAccess('none');
  if (!identity.selfSigned || !isCurrent(identity, now.getTime())) throw noAccess(identity.fingerprint);
  const client = await findActiveClient(database, identity.fingerprint);
  if (!client) throw noAccess(identity.fingerprint);
  return {
    clientId: client.id, clientCompanyId: client.company_id, impersonation: client.impersonation,
    companyId: client.company_id, session: null, level: 'basic', canCreateCompanies: true,
  };
}
