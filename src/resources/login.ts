// POST /3.0/login: a user's name and password, through a certificate
// registered with impersonation, open a session.
import { attemptSucceeded, claimAttempt, type LoginSpender } from '../auth/throttle.ts';
import { createSession } from '../auth/sessions.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { insertAudit } from '../engine/audit.ts';
import { bodyObjects } from '../engine/body.ts';
import { badLogin, forbidden, invalidField, invalidFilter, invalidValue } from '../errors.ts';
import { formatDatetime } from '../model/dates.ts';
import { jsonObjectText } from '../model/json.ts';
import type { Ctx, Endpoint } from '../engine/types.ts';

const FIELDS = ['username', 'password', 'ip', 'useragent'] as const;
/** Optional fields: an explicit null means not given. */
const OPTIONAL: ReadonlySet<string> = new Set(['ip', 'useragent']);

export interface Credentials {
  readonly username: string;
  readonly password: string;
  /** What the caller reports of its own client, kept in the audit entry. */
  readonly ip?: string;
  readonly useragent?: string;
}

/**
 * Checks a user's name and password under the login throttle and opens a session
 * bound to the spender's certificate (none for the portal's address): the token,
 * or null for a wrong name or password, audited either way. `admits` may turn
 * away a user the caller does not serve; that counts as a failed login too.
 */
export async function openSession(ctx: Ctx, given: Credentials, spender: LoginSpender, failuresPerHour: number,
  admits: (companyId: number) => Promise<boolean> = () => Promise.resolve(true)): Promise<string | null> {
  const { db } = ctx.database;
  const now = ctx.clock.now();
  await claimAttempt(ctx.database, given.username, spender, now, failuresPerHour);
  const user = await db.selectFrom('users').select(['id', 'company_id', 'password_hash'])
    .where('username', '=', given.username).executeTakeFirst();
  const ok = await verifyPassword(given.password, user?.password_hash ?? null) && !!user && await admits(Number(user.company_id));
  const details = jsonObjectText([['username', JSON.stringify(given.username)], ['reported_ip', JSON.stringify(given.ip ?? null)],
    ['useragent', JSON.stringify(given.useragent ?? null)], ['result', ok ? '"success"' : '"failure"']]);
  const entry = {
    endpoint: 'login', action: 'login' as const, recordId: user && ok ? Number(user.id) : null, newdata: details,
    // A failure is the certificate's company's to see; on the portal, the named user's company's (if any).
    companyId: user && (ok || !('clientId' in spender)) ? Number(user.company_id) : 'clientId' in spender ? ctx.principal.clientCompanyId : null,
    userId: user && ok ? Number(user.id) : null,
    message: ok && user ? `Login of users record ${user.id}` : `Failed login for username ${JSON.stringify(given.username)}`,
  };
  return ctx.database.transaction(async (trx) => {
    if (!ok || !user) {
      await insertAudit(ctx, trx, formatDatetime(now), [entry]);
      return null;
    }
    await attemptSucceeded(trx, given.username, spender);
    const t = await createSession(trx, 'clientId' in spender ? spender.clientId : null, { id: Number(user.id), company_id: Number(user.company_id) }, now);
    await insertAudit(ctx, trx, formatDatetime(now), [entry]);
    return t;
  });
}

export function loginEndpoint(failuresPerHour: number): Endpoint {
  return {
    name: 'login',
    access: { POST: 'readonly' },
    sessionless: true,
    authorize(p) {
      if (!p.impersonation) throw forbidden('Impersonation is not enabled for this certificate');
    },
    handlers: {
      async POST(c) {
        const { ctx } = c;
        if (c.segments.length > 0) throw invalidFilter(c.segments[0]!);
        const [body] = bodyObjects(c.json(), 'POST');
        if (body!.entries.has('ikey')) throw forbidden('Impersonation keys are not supported');
        const given: Partial<Record<(typeof FIELDS)[number], string>> = {};
        for (const [k, v] of body!.entries) {
          const name = FIELDS.find((f) => f === k);
          if (!name) throw invalidField(k);
          // The published client sends `"ip": null, "useragent": null` when the caller gave none.
          if (v === null && OPTIONAL.has(name)) continue;
          if (typeof v !== 'string' || v.length > 1024) throw invalidValue(k);
          given[name] = v;
        }
        if (given.username === undefined) throw invalidValue('username');
        if (given.password === undefined) throw invalidValue('password');
        const token = await openSession(ctx, { username: given.username, password: given.password, ip: given.ip, useragent: given.useragent },
          { clientId: ctx.principal.clientId! }, failuresPerHour);
        if (token === null) throw badLogin();
        return { response: `{"message":"Authentication successful","user_token":"${token}"}` };
      },
    },
  };
}
