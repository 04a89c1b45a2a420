// Access levels of sessions: readonly < user < admin; creating
// companies also needs can_create_companies. Basic mode is not limited.
import { accessDenied } from '../errors.ts';
import { memberOf, parseJson } from '../model/json.ts';
import type { Principal } from '../model/principal.ts';
import type { Level, Need, Verb } from '../model/types.ts';
import type { Endpoint } from '../engine/types.ts';

const RANK: Readonly<Record<Level, number>> = { readonly: 0, user: 1, admin: 2 };

/** `users.permissions` → level and flag; null or a missing level means `user`. */
export function levelOf(permissions: string | null): { level: Level; canCreateCompanies: boolean } {
  const v = permissions ? parseJson(permissions) : null;
  const get = (k: string) => memberOf(v, k);
  const level = get('level');
  return {
    level: level === 'readonly' || level === 'admin' ? level : 'user',
    canCreateCompanies: get('can_create_companies') === true,
  };
}

/** True when `permissions` grant a level or flag that the session `p` does not hold itself. */
export function exceeds(permissions: string | null, p: Principal): boolean {
  if (p.level === 'basic') return false;
  const wanted = levelOf(permissions);
  return RANK[wanted.level] > RANK[p.level] || (wanted.canCreateCompanies && !p.canCreateCompanies);
}

export const needText = (need: Need) => (need === 'creator' ? 'admin with can_create_companies' : need);

/** A caller of `level` meets `need` (creating companies also needs the flag, which only a principal shows). */
export const meets = (level: 'basic' | Level, need: Need): boolean =>
  level === 'basic' || (need !== 'creator' && RANK[level] >= RANK[need]);

export function allows(p: Principal, need: Need): boolean {
  if (need === 'creator' && p.level !== 'basic') return p.level === 'admin' && p.canCreateCompanies;
  return meets(p.level, need);
}

/** Throws 403 when the caller's level may not use the verb on the endpoint. */
export function authorize(endpoint: Endpoint, verb: Verb, p: Principal): void {
  if (endpoint.authorize) return endpoint.authorize(p, verb);
  const need = endpoint.access[verb] ?? 'admin';
  if (!allows(p, need)) throw accessDenied(verb, endpoint.name, needText(need));
}
