import type { Level } from './types.ts';

/** A live session (impersonation mode). */
export interface SessionInfo {
  readonly id: number;
  readonly token: string;
  readonly userId: number;
  readonly companyId: number;
}

/** Who is calling: resolved once per request from the certificate (and session). */
export interface Principal {
  /** The certificate; null for the operator acting through the CLI. */
  readonly clientId: number | null;
  readonly clientCompanyId: number;
  readonly impersonation: boolean;
  /** Root of the scope: the certificate's company, or the session user's. */
  readonly companyId: number;
  readonly session: SessionInfo | null;
  /** 'basic' is a certificate without a session: full access within its scope. */
  readonly level: 'basic' | Level;
  readonly canCreateCompanies: boolean;
}
