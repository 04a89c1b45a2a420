// The approval queue: the scope's entries still awaiting approval, and (user and
// admin) a request for a new asset, which is the assetqueue PUT.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { ask, type Asker, type EngineDeps, mayAsk } from '../engine.ts';
import { render } from '../render.ts';
import { signedIn } from '../visit.ts';
import { field, type PageDeps, wholeNumber } from './deps.ts';

const REQUEST_FIELDS = ['description', 'asset_no', 'serial_no', 'manufacturer', 'model', 'period'] as const;

async function queuePageOf(engine: EngineDeps, who: Asker, req: FastifyRequest, reply: FastifyReply,
  o: { problem?: string; status?: number; asked?: Record<string, string> } = {}) {
  const page = wholeNumber(field(req.query, 'page')) ?? 1;
  const { response, pagination } = await ask<Record<string, unknown>[]>(engine, who, {
    verb: 'GET', endpoint: 'assetqueue', filters: [['released=', '0'], ['page=', String(page)]], order: 'requested_date,id',
  });
  const pages = pagination?.total_pages ?? 0;
  return render(reply, req.visit, 'queue', 'Queue', 'queue', {
    entries: response, total: pagination?.total_records ?? 0, mayRequest: mayAsk(engine, who, 'PUT', 'assetqueue'),
    requested: field(req.query, 'requested') === '1', asked: o.asked ?? {}, problem: o.problem,
    pager: { page, pages, prev: page > 1 ? `/queue?page=${page - 1}` : null, next: page < pages ? `/queue?page=${page + 1}` : null },
  }, o.status ?? 200);
}

export function queuePage(app: FastifyInstance, { engine }: PageDeps): void {
  app.get('/queue', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    return queuePageOf(engine, who, req, reply);
  });

  app.post('/queue', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const asked = Object.fromEntries(REQUEST_FIELDS.map((k) => [k, field(req.body, k).trim()]));
    // Empty fields are left out, so the endpoint's defaults apply; the period is a number when it looks like one.
    const body = Object.fromEntries(Object.entries(asked).filter(([, v]) => v !== '')
      .map(([k, v]) => [k, k === 'period' && /^\d{1,6}$/.test(v) ? Number(v) : v]));
    try {
      await ask(engine, who, { verb: 'PUT', endpoint: 'assetqueue', body });
    } catch (e) {
      if (!(e instanceof ApiError) || e.status >= 500 || e.status === 403) throw e;
      return queuePageOf(engine, who, req, reply, { problem: e.message, status: e.status, asked });
    }
    return reply.redirect('/queue?requested=1', 303);
  });
}
