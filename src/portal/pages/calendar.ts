// The calendar feed: `/calendar/<token>.ics` answers an iCalendar (RFC 5545) of the
// check dates of the link's user's assets — the overdue ones and those of the next
// twelve months, one all-day event per asset whose UID stays the same from one read
// to the next, so a calendar program updates events instead of adding them. The
// assets are read through the engine as that user, a batch at a time, and written
// out as they come, so a large company costs time in proportion and little memory.
// The link is made, replaced and turned off on /account.
import type { FastifyInstance } from 'fastify';
import ical, { ICalEvent } from 'ical-generator';
import { Readable } from 'node:stream';
import { feedPrincipal, removeFeedToken, replaceFeedToken } from '../../admin/feeds.ts';
import { addMonths } from '../../model/dates.ts';
import { askEach, type Asker, type EngineDeps } from '../engine.ts';
import { notFoundPage } from '../render.ts';
import { signedIn } from '../visit.ts';
import { accountPage } from './account.ts';
import { homeCompany } from './common.ts';
import type { PageDeps } from './deps.ts';

interface DueAsset { readonly id: number; readonly asset_no: string; readonly description: string; readonly next_check: string | null }

const FILE = /^([0-9a-f]{64})\.ics$/;

async function* calendarText(engine: EngineDeps, who: Asker, host: string): AsyncGenerator<string> {
  const { company, window } = await homeCompany(engine, who);
  const until = addMonths(window.today, 12) ?? '9999-12-31';
  const calendar = ical({ name: `Checks due — ${company?.name ?? 'assets'}`, prodId: { company: 'asset-tracker', product: 'portal' } });
  // The calendar's own lines, then each batch of events as it is read, then its end.
  const [head] = calendar.toString().split('END:VCALENDAR');
  yield head!;
  const stamp = engine.clock.now();
  // Every asset of the scope in id order, the dates tested here: a date filter would have the database
  // sort each batch's matches anew, where the walk in id order reads each asset once.
  for await (const batch of askEach<DueAsset>(engine, who, { endpoint: 'assets', filters: [] })) {
    yield batch.filter((a): a is DueAsset & { next_check: string } => a.next_check !== null && a.next_check <= until).map((a) => new ICalEvent({
      id: `asset-${a.id}-check@${host}`, start: a.next_check, allDay: true, stamp,
      summary: `${a.asset_no} ${a.description ?? ''}`.trim(), url: `https://${host}/assets/${a.id}`,
    }, calendar).toString()).join('');
  }
  yield 'END:VCALENDAR\r\n';
}

export function calendarPages(app: FastifyInstance, { engine }: PageDeps): void {
  app.get<{ Params: { file: string } }>('/calendar/:file', async (req, reply) => {
    const token = FILE.exec(req.params.file)?.[1];
    const principal = token ? await feedPrincipal(engine.database, token) : null;
    if (!principal) return notFoundPage(reply, req.visit);
    const host = req.headers.host ?? 'localhost';
    return reply.type('text/calendar; charset=utf-8').header('content-disposition', 'inline; filename="checks.ics"')
      .send(Readable.from(calendarText(engine, { principal, ip: req.ip }, host)));
  });

  app.post('/account/calendar', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const token = await replaceFeedToken(engine.database, who.principal.session!.userId, engine.clock);
    return accountPage(engine, who, req.visit, reply, { feedLink: `https://${req.headers.host ?? 'localhost'}/calendar/${token}.ics` });
  });

  app.post('/account/calendar/off', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    await removeFeedToken(engine.database, who.principal.session!.userId);
    return reply.redirect('/account?calendar=off', 303);
  });
}
