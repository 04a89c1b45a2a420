// The printable list (GET with `Accept: application/pdf`): every record the query
// matches, as the CSV export reads them — a batch at a time, no paging — drawn as a
// PDF under the caller's company's name and logo, the filter as sent and today's
// date in that company's time zone. The company is read before the answer starts,
// so a failure there is still an error envelope.
import { PassThrough, type Readable } from 'node:stream';
import { sql } from 'kysely';
import { todayIn } from '../model/dates.ts';
import { type JsonObject, parseJson } from '../model/json.ts';
import { settingsOf } from '../model/reminder-window.ts';
import { logoOf } from '../model/logo.ts';
import type { ResourceDef } from '../model/types.ts';
import { decodeQueryValue } from '../filter/parse.ts';
import { type ListHeading, writeListPdf } from '../print/list-pdf.ts';
import { allRecords } from './list.ts';
import { PARAMS, readRows } from './params.ts';
import type { Ctx, Filters, PrintedList, Query } from './types.ts';

interface CompanyRow { readonly name: string; readonly logo: string | null; readonly data: string | null }

/** The filter as the caller wrote it: path segments, then the query string's filters (decoded), one `/` between. */
export function filterText(f: Filters): string {
  return [...f.segments, ...f.query.filter((q) => !q.startsWith('page=')).map(decodeQueryValue)].join('/');
}

/** The heading of a list printed for the caller: their company's name, logo and today. */
export async function listHeading(ctx: Ctx, title: string, filter: string): Promise<ListHeading> {
  const [company] = await readRows<CompanyRow>(ctx, 'print-company', () => sql`SELECT name, logo, data FROM companies WHERE id = ${PARAMS.root}`);
  return {
    title, filter, companyName: company?.name ?? '', logo: logoOf(company?.logo ?? null)?.bytes ?? null,
    today: todayIn(settingsOf(0, company?.data ?? null).timeZone, ctx.clock.now()),
  };
}

async function* parsed(batches: AsyncIterable<string[]>, keep: (record: JsonObject) => boolean): AsyncGenerator<JsonObject[]> {
  for await (const batch of batches) yield batch.map((json) => parseJson(json) as JsonObject).filter(keep);
}

/** The whole list as a stream of PDF bytes; `keep` leaves records out (as the CSV export's does). */
export async function pdfExport(ctx: Ctx, def: ResourceDef, query: Query, printed: PrintedList, filters: Filters,
  keep: (record: JsonObject) => boolean = () => true): Promise<Readable> {
  const heading = await listHeading(ctx, printed.title, filterText(filters));
  const out = new PassThrough();
  // Failures reading the rows destroy `out` (the answer breaks off); nothing is left to handle here.
  writeListPdf(out, heading, printed.columns(heading.today), parsed(allRecords(ctx, def, query), keep)).catch(() => undefined);
  return out;
}
