// Who is at the portal: the company the host names (its look), and the signed-in
// user's principal, resumed from the session cookie on every request exactly as
// the API resumes a session (expiry moved, level and scope read afresh).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Brand, brandOf } from '../admin/branding.ts';
import { connectionAddress } from '../auth/peer.ts';
import { resumePortalSession } from '../auth/sessions.ts';
import { ApiError } from '../errors.ts';
import type { Principal } from '../model/principal.ts';
import { ask, type Asker, type EngineDeps } from './engine.ts';
import { cookieToken, formToken } from './web.ts';

export interface Visit {
  readonly brand: Brand | null;
  readonly ip: string;
  readonly principal: Principal | null;
  /** The session token (never shown); its form token is what pages carry. */
  readonly token: string | null;
  /** The name pages carry in their title: the host's company, else the signed-in user's, else none. */
  readonly companyName: string | null;
}

export async function visitOf(deps: EngineDeps, req: FastifyRequest): Promise<Visit> {
  const brand = await brandOf(deps.database, req.headers.host);
  const token = cookieToken(req.headers.cookie);
  let principal: Principal | null = null;
  if (token) {
    try {
      principal = await resumePortalSession(deps.database, token, deps.clock.now());
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
    }
  }
  let companyName = brand?.name ?? null;
  if (principal && !companyName) {
    const { response } = await ask<{ name: string | null }[]>(deps, { principal, ip: visitorAddress(req) },
      { verb: 'GET', endpoint: 'companies', filters: [['id=', String(principal.companyId)]] });
    companyName = response[0]?.name ?? null;
  }
  return { brand, ip: visitorAddress(req), principal, token: principal ? token : null, companyName };
}

/** The visitor's address: the connection's, or the client's a PROXY header gave (PROXY_PROTOCOL_FROM). */
export const visitorAddress = (req: FastifyRequest): string => connectionAddress(req.raw.socket) ?? req.ip;

/** The signed-in user as the engine's asker; a visitor without a session is sent to sign in. */
export function signedIn(visit: Visit, reply: FastifyReply): Asker | null {
  if (!visit.principal) {
    void reply.redirect('/login', 303);
    return null;
  }
  return { principal: visit.principal, ip: visit.ip };
}

export const csrfOf = (visit: Visit) => (visit.token ? formToken(visit.token) : '');
