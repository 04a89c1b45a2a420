// The approval queue: the scope's entries still awaiting approval.
import type { FastifyInstance } from 'fastify';
import { ask } from '../engine.ts';
import { render } from '../render.ts';
import { signedIn } from '../visit.ts';
import { field, type PageDeps, wholeNumber } from './deps.ts';

export function queuePage(app: FastifyInstance, { engine }: PageDeps): void {
  app.get('/queue', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const page = wholeNumber(field(req.query, 'page')) ?? 1;
    const { response, pagination } = await ask<Record<string, unknown>[]>(engine, who, {
      verb: 'GET', endpoint: 'assetqueue', filters: [['released=', '0'], ['page=', String(page)]], order: 'requested_date,id',
    });
    const pages = pagination?.total_pages ?? 0;
    return render(reply, req.visit, 'queue', 'Queue', 'queue', {
      entries: response, total: pagination?.total_records ?? 0,
      pager: { page, pages, prev: page > 1 ? `/queue?page=${page - 1}` : null, next: page < pages ? `/queue?page=${page + 1}` : null },
    });
  });
}
