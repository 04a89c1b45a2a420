// Pages are Eta templates (autoescaped: `<%= %>` escapes every value) inside one
// layout that carries the title, the company's name and logo, and the navigation.
import type { FastifyReply } from 'fastify';
import { ApiError } from '../errors.ts';
import { csrfOf, type Visit } from './visit.ts';

export const SERVICE_NAME = 'Asset Tracker';

const NAV = [
  ['dashboard', '/', 'Dashboard'], ['assets', '/assets', 'Assets'], ['queue', '/queue', 'Queue'],
  ['messages', '/messages', 'Messages'], ['account', '/account', 'Account'], ['logout', '/logout', 'Sign out'],
] as const;

export type Section = (typeof NAV)[number][0] | 'login' | 'error' | 'status';

export function render(reply: FastifyReply, visit: Visit, section: Section, title: string, template: string,
  data: Record<string, unknown> = {}, status = 200): FastifyReply {
  const page = {
    title, site: visit.companyName ?? SERVICE_NAME, logo: !!visit.brand?.logo, signedIn: !!visit.principal, csrf: csrfOf(visit),
    nav: NAV.map(([key, href, name]) => ({ href, name, current: key === section })),
  };
  return reply.code(status).type('text/html; charset=utf-8').view(template, { ...data, page });
}

/** A refusal as a page: the API's message and status (a missing record and one out of scope alike: 404). */
export function refusal(reply: FastifyReply, visit: Visit, error: ApiError): FastifyReply {
  const heading = error.status === 404 ? 'Not found' : error.status === 403 ? 'Not allowed' : 'Not done';
  return render(reply, visit, 'error', heading, 'error', { heading, message: error.message }, error.status);
}

export const notFoundPage = (reply: FastifyReply, visit: Visit) =>
  refusal(reply, visit, new ApiError(404, 'not_found', 'There is no such page or record.'));
