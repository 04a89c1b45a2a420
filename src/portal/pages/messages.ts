// The user's messages, newest first, and marking one read: the API's messages
// endpoint, which already limits a session to its own messages and read state.
import type { FastifyInstance } from 'fastify';
import { ask, mayAsk } from '../engine.ts';
import { render } from '../render.ts';
import { signedIn } from '../visit.ts';
import { field, type PageDeps, wholeNumber } from './deps.ts';
import { notFound } from '../../errors.ts';

interface MessageRecord {
  readonly id: number;
  readonly messagetext: string;
  readonly message_read: number;
  readonly date_range_start: string | null;
  readonly modified: string;
  readonly sender: { readonly username: string | null; readonly first_name: string | null; readonly last_name: string | null } | null;
}

const senderOf = (m: MessageRecord) => {
  const s = m.sender;
  const name = s ? [s.first_name, s.last_name].filter(Boolean).join(' ') || s.username : null;
  return name || 'The service';
};

export function messagesPage(app: FastifyInstance, { engine }: PageDeps): void {
  app.get('/messages', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const page = wholeNumber(field(req.query, 'page')) ?? 1;
    const { response, pagination } = await ask<MessageRecord[]>(engine, who, {
      verb: 'GET', endpoint: 'messages', filters: [['page=', String(page)]], order: 'id^',
    });
    const pages = pagination?.total_pages ?? 0;
    return render(reply, req.visit, 'messages', 'Messages', 'messages', {
      total: pagination?.total_records ?? 0, mayMark: mayAsk(engine, who, 'POST', 'messages'),
      messages: response.map((m) => ({ id: m.id, text: m.messagetext, read: Number(m.message_read) === 1, from: senderOf(m),
        date: m.date_range_start ?? m.modified.slice(0, 10) })),
      pager: { page, pages, prev: page > 1 ? `/messages?page=${page - 1}` : null, next: page < pages ? `/messages?page=${page + 1}` : null },
    });
  });

  app.post<{ Params: { id: string } }>('/messages/:id/read', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const id = wholeNumber(req.params.id);
    if (id === null) throw notFound(`Message ${req.params.id} does not exist`);
    const { response } = await ask<{ records_found: number }>(engine, who,
      { verb: 'POST', endpoint: 'messages', filters: [['id=', String(id)]], body: { message_read: 1 } });
    if (response.records_found === 0) throw notFound(`Message ${id} does not exist`);
    return reply.redirect('/messages', 303);
  });
}
