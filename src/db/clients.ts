// Registered client certificates, by SPKI fingerprint.
import type { Db } from './database.ts';

export interface ActiveClient { readonly id: number; readonly company_id: number; readonly impersonation: boolean }

/** The registered, non-revoked certificate with this fingerprint. */
export async function findActiveClient(db: Db, fingerprint: string): Promise<ActiveClient | undefined> {
  const c = await db.selectFrom('clients').select(['id', 'company_id', 'impersonation'])
    .where('fingerprint', '=', fingerprint).where('revoked', 'is', null).executeTakeFirst();
  return c && { id: Number(c.id), company_id: Number(c.company_id), impersonation: c.impersonation === 1 };
}
