// Basic mode (spec §2.1): a registered, non-revoked, self-signed certificate
// inside its validity period grants its company's scope. Every failure reads the
// same, naming the fingerprint that was presented.
import type { Db } from '../db/database.ts';
import { noAccess } from '../errors.ts';
import type { Principal } from '../model/principal.ts';
import { type CertificateIdentity, isCurrent } from './certificate.ts';

export async function authenticate(db: Db, identity: CertificateIdentity | null, now: Date): Promise<Principal> {
  if (!identity) throw noAccess('none');
  if (!identity.selfSigned || !isCurrent(identity, now.getTime())) throw noAccess(identity.fingerprint);
  const client = await db.selectFrom('clients').select(['id', 'company_id', 'impersonation'])
    .where('fingerprint', '=', identity.fingerprint).where('revoked', 'is', null).executeTakeFirst();
  if (!client) throw noAccess(identity.fingerprint);
  return {
    clientId: Number(client.id), clientCompanyId: Number(client.company_id), impersonation: client.impersonation === 1,
    companyId: Number(client.company_id), session: null, level: 'basic', canCreateCompanies: true,
  };
}
