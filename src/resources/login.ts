// POST /3.0/login (spec §2.2): a user's name and password, through a certificate
// registered with impersonation, open a session.
import { attemptSucceeded, claimAttempt } from '../auth/throttle.ts';
import { createSession } from '../auth/sessions.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { insertAudit } from '../engine/audit.ts';
import { bodyObjects } from '../engine/body.ts';
import { badLogin, forbidden, invalidField, invalidFilter, invalidValue } from '../errors.ts';
import { formatDatetime } from '../model/dates.ts';
import { jsonObjectText } from '../model/json.ts';
import type { Endpoint } from '../engine/types.ts';

const FIELDS = ['username', 'password', 'ip', 'useragent'] as const;
/** Optional fields: an explicit null means not given. */
const OPTIONAL: ReadonlySet<string> = new Set(['ip', 'useragent']);

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
          // The published client sends `"ip": null, "useragent": null` when the caller gave none (spec §13).
          if (v === null && OPTIONAL.has(name)) continue;
          if (typeof v !== 'string' || v.length > 1024) throw invalidValue(k);
          given[name] = v;
        }
        if (given.username === undefined) throw invalidValue('username');
        if (given.password === undefined) throw invalidValue('password');
        const { db } = ctx.database;
        const now = ctx.clock.now();
        const clientId = ctx.principal.clientId!;
        await claimAttempt(ctx.database, given.username, clientId, now, failuresPerHour);
        const user = await db.selectFrom('users').select(['id', 'company_id', 'password_hash'])
          .where('username', '=', given.username).executeTakeFirst();
        const ok = await verifyPassword(given.password, user?.password_hash ?? null);
        const details = jsonObjectText([['username', JSON.stringify(given.username)], ['reported_ip', JSON.stringify(given.ip ?? null)],
          ['useragent', JSON.stringify(given.useragent ?? null)], ['result', ok ? '"success"' : '"failure"']]);
        const entry = {
          endpoint: 'login', action: 'login' as const, recordId: user && ok ? Number(user.id) : null, newdata: details,
          companyId: user && ok ? Number(user.company_id) : ctx.principal.clientCompanyId, userId: user && ok ? Number(user.id) : null,
          message: ok ? `Login of users record ${user!.id}` : `Failed login for username ${JSON.stringify(given.username)}`,
        };
        const token = await ctx.database.transaction(async (trx) => {
          if (!ok || !user) {
            await insertAudit(ctx, trx, formatDatetime(now), [entry]);
            return null;
          }
          await attemptSucceeded(trx, given.username!, clientId);
          const t = await createSession(trx, clientId, { id: Number(user.id), company_id: Number(user.company_id) }, now);
          await insertAudit(ctx, trx, formatDatetime(now), [entry]);
          return t;
        });
        if (token === null) throw badLogin();
        return { response: `{"message":"Authentication successful","user_token":"${token}"}` };
      },
    },
  };
}
