// Signing in and out. A sign-in is the API's login (the same throttle, password
// check and audit entry), with the portal's client address spending the failure
// budget a certificate spends on the API; the session it opens is bound to no
// certificate and travels only in the `__Host-session` cookie.
import type { FastifyInstance } from 'fastify';
import { belongsTo } from '../../admin/branding.ts';
import { ApiError } from '../../errors.ts';
import { openSession } from '../../resources/login.ts';
import { ask } from '../engine.ts';
import { render } from '../render.ts';
import { clearedCookie, sessionCookie } from '../web.ts';
import { field, type PageDeps } from './deps.ts';

const FAILED = 'Invalid username or password';
const LONGEST = 1024;

export function signInPages(app: FastifyInstance, deps: PageDeps): void {
  const { engine } = deps;
  app.get('/login', async (req, reply) => {
    if (req.visit.principal) return reply.redirect('/', 303);
    return render(reply, req.visit, 'login', 'Sign in', 'login', { username: '' });
  });

  app.post('/login', async (req, reply) => {
    const visit = req.visit;
    const username = field(req.body, 'username');
    const password = field(req.body, 'password');
    const again = (message: string, status: number) => render(reply, visit, 'login', 'Sign in', 'login', { username, failed: message }, status);
    if (!username || !password || username.length > LONGEST || password.length > LONGEST) return again(FAILED, 401);
    const brand = visit.brand;
    const ctx = {
      database: engine.database, catalog: engine.registry, clock: engine.clock, limits: engine.limits, baseUrl: engine.baseUrl,
      blobs: engine.blobs, ip: visit.ip,
      principal: { clientId: null, clientCompanyId: brand?.companyId ?? 0, impersonation: false, companyId: brand?.companyId ?? 0,
        session: null, level: 'readonly' as const, canCreateCompanies: false },
    };
    let token: string | null;
    try {
      token = await openSession(ctx, { username, password, useragent: req.headers['user-agent']?.slice(0, LONGEST) }, { address: visit.ip },
        deps.loginFailuresPerHour, brand ? (companyId) => belongsTo(engine.database, companyId, brand.companyId) : undefined);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.headers['retry-after']) void reply.header('retry-after', e.headers['retry-after']);
      return again(e.message, e.status);
    }
    if (token === null) return again(FAILED, 401);
    return reply.header('set-cookie', sessionCookie(token)).redirect('/', 303);
  });

  app.get('/logout', async (req, reply) => {
    if (!req.visit.principal) return reply.redirect('/login', 303);
    return render(reply, req.visit, 'logout', 'Sign out', 'logout');
  });

  app.post('/logout', async (req, reply) => {
    const { principal, ip } = req.visit;
    // The API's logout: the session ends and the audit log says so.
    if (principal) await ask(engine, { principal, ip }, { verb: 'GET', endpoint: 'logout' });
    return reply.header('set-cookie', clearedCookie).redirect('/login', 303);
  });
}
