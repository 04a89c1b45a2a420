// What every portal answer shares: the session cookie, the form token bound to the
// session, the headers that keep pages from being framed, sniffed or scripted
// inline, and the check that a changing request came from the portal's own pages.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export const SESSION_COOKIE = '__Host-session';

/** Secure, HttpOnly, SameSite=Lax, Path=/ and no Domain: what `__Host-` requires and a session deserves. */
export const sessionCookie = (token: string) => `${SESSION_COOKIE}=${token}; Secure; HttpOnly; SameSite=Lax; Path=/`;
export const clearedCookie = `${SESSION_COOKIE}=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0`;

export function cookieToken(header: string | undefined): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * The token a changing form carries: derived from the session's token by a keyed
 * hash, so it is bound to that session, dies with it, and does not reveal it.
 */
export const formToken = (sessionToken: string) => createHmac('sha256', sessionToken).update('portal form').digest('hex');

export function formTokenMatches(sessionToken: string, sent: unknown): boolean {
  if (typeof sent !== 'string') return false;
  const expected = Buffer.from(formToken(sessionToken));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A request's `Origin`, when sent, must be this very host over HTTPS. */
export function sameOrigin(headers: IncomingHttpHeaders): boolean {
  const origin = headers.origin;
  if (origin === undefined) return true;
  return origin === `https://${headers.host ?? ''}`;
}

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; form-action 'self'; "
    + "base-uri 'none'; object-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};
