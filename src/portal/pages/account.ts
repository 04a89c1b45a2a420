// The user's own account: who they are, and changing their password with the
// current one first. The new password is set by the API's password endpoint (its
// length rules, its hash, its audit entry, and the end of the user's other sessions).
import type { FastifyInstance } from 'fastify';
import { feedCreated } from '../../admin/feeds.ts';
import { passwordMatches } from '../../admin/users.ts';
import { ApiError } from '../../errors.ts';
import { ask, type Asker, type EngineDeps } from '../engine.ts';
import { render } from '../render.ts';
import type { Visit } from '../visit.ts';
import { signedIn } from '../visit.ts';
import { field, type PageDeps } from './deps.ts';
import type { FastifyReply } from 'fastify';

interface AccountNotes {
  readonly problem?: string;
  readonly changed?: boolean;
  readonly status?: number;
  /** A calendar link just made: shown this once. */
  readonly feedLink?: string;
  readonly feedOff?: boolean;
}

export async function accountPage(engine: EngineDeps, who: Asker, visit: Visit, reply: FastifyReply, o: AccountNotes) {
  const userId = who.principal.session!.userId;
  const [{ response }, feedMade] = await Promise.all([
    ask<Record<string, unknown>[]>(engine, who, { verb: 'GET', endpoint: 'users', filters: [['id=', String(userId)]] }),
    feedCreated(engine.database, userId),
  ]);
  return render(reply, visit, 'account', 'Account', 'account', { user: response[0] ?? {}, level: who.principal.level, feedMade, ...o },
    o.status ?? 200);
}

export function accountPages(app: FastifyInstance, { engine }: PageDeps): void {
  app.get('/account', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    return accountPage(engine, who, req.visit, reply,
      { changed: field(req.query, 'changed') === '1', feedOff: field(req.query, 'calendar') === 'off' });
  });

  app.post('/account/password', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const userId = who.principal.session!.userId;
    const current = field(req.body, 'current');
    const next = field(req.body, 'new');
    if (!(await passwordMatches(engine.database, userId, current))) {
      return accountPage(engine, who, req.visit, reply, { problem: 'The current password is not right. Nothing was changed.', status: 400 });
    }
    try {
      await ask(engine, who, { verb: 'POST', endpoint: 'password', filters: [['id=', String(userId)]], body: { new_password: next } });
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'invalid_value') throw e;
      return accountPage(engine, who, req.visit, reply,
        { problem: `${e.message}: a password has 8 to 1024 characters. Nothing was changed.`, status: e.status });
    }
    return reply.redirect('/account?changed=1', 303);
  });
}
