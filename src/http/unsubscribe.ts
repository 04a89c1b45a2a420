// GET and POST /unsubscribe/<token> on the API's listener, without a client
// certificate (as /healthz): the one-click unsubscribe link of every reminder digest
// (RFC 8058). GET only shows the page; POST turns the user's reminders off. A token
// that does not verify is not found.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Database } from '../db/database.ts';
import type { Clock } from '../model/dates.ts';
import { tokenIsGood, unsubscribe, unsubscribePage } from '../mail/unsubscribe.ts';

export interface UnsubscribeDeps {
  readonly database: Database;
  readonly clock: Clock;
  /** The client's address for the audit entry (the peer, or a trusted proxy's X-Forwarded-For). */
  readonly ipOf: (req: IncomingMessage) => string | null;
}

const NOT_FOUND = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>'
  + '<body><h1>Not found</h1><p>This unsubscribe link is not valid.</p></body></html>';

function page(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers({
    'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
  }).send(html);
}

export function unsubscribeRoutes(fastify: FastifyInstance, d: UnsubscribeDeps): void {
  fastify.get<{ Params: { token: string } }>('/unsubscribe/:token', async (req, reply) =>
    ((await tokenIsGood(d.database, req.params.token)) ? page(reply, 200, unsubscribePage(false)) : page(reply, 404, NOT_FOUND)));
  fastify.post<{ Params: { token: string } }>('/unsubscribe/:token', async (req, reply) =>
    ((await unsubscribe(d.database, req.params.token, d.ipOf(req.raw), d.clock)) ? page(reply, 200, unsubscribePage(true)) : page(reply, 404, NOT_FOUND)));
}
