// Registered client certificates, by SPKI fingerprint.
import { sql } from 'kysely';
import type { Database } from './database.ts';
import { Param } from './statements.ts';

export interface ActiveClient { readonly id: number; readonly company_id: number; readonly impersonation: boolean }

const FINGERPRINT = new Param('fingerprint');

/** The registered, non-revoked certificate with this fingerprint (every request: one prepared statement). */
export async function findActiveClient(database: Database, fingerprint: string): Promise<ActiveClient | undefined> {
  const statement = database.statements.get('client-by-fingerprint',
    () => sql`SELECT id, company_id, impersonation FROM clients WHERE fingerprint = ${FINGERPRINT} AND revoked IS NULL`);
  const [c] = await database.read<{ id: number; company_id: number; impersonation: number }>(statement, { fingerprint });
  return c && { id: Number(c.id), company_id: Number(c.company_id), impersonation: Number(c.impersonation) === 1 };
}
