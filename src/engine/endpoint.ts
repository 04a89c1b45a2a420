// An endpoint answers the verbs it supports; resource endpoints get their
// handlers from the generic engine. Nothing here knows about HTTP.
import type { ResourceDef, Verb } from '../model/types.ts';
import { bodyObjects } from './body.ts';
import { csvExport } from './csv.ts';
import { importCsv } from './csv-import.ts';
import { listRecords, pageReply } from './list.ts';
import { listFormat, type ListFormat } from './negotiate.ts';
import { pdfExport } from './pdf.ts';
import { parseQuery } from './query.ts';
import { deleteRecords } from './remove.ts';
import { updateRecords } from './update.ts';
import { createRecords } from './write.ts';
import type { Call, DeleteResult, Endpoint, Handler, PrintedList, Query, Reply, Resource, UpdateResult } from './types.ts';

export const counts = (a: string, an: number, b: string, bn: number) => `{${JSON.stringify(a)}:${an},${JSON.stringify(b)}:${bn}}`;

const updated = (r: UpdateResult): Reply => ({ response: counts('records_updated', r.updated, 'records_found', r.found) });
const deleted = (r: DeleteResult): Reply => ({ response: counts('records_deleted', r.deleted, 'records_found', r.found) });

/** The PUT reply: 201 with the new ids. */
export const created = (ids: readonly number[]): Reply =>
  ({ status: 201, response: `{"records_inserted":${ids.length},"ids":[${ids.join(',')}]}` });

/**
 * The GET reply, in the format the Accept header prefers (negotiate.ts): a page of
 * records with the pagination of the whole match, or every match as CSV, or (where
 * the resource has a printed list) as a PDF.
 */
export async function listReply(c: Call, def: ResourceDef, q: Query, printed?: PrintedList): Promise<Reply> {
  const { ctx } = c;
  const format = listFormat(c.accept, printed ? WITH_PDF : WITHOUT_PDF);
  if (format === 'csv') return { response: '', file: { stream: await csvExport(ctx, def, q), headers: CSV_TYPE } };
  if (format === 'pdf' && printed) return { response: '', file: { stream: await pdfExport(ctx, def, q, printed, c), headers: PDF_TYPE } };
  return pageReply(await listRecords(ctx, def, q), ctx.limits.pageSize);
}

const WITHOUT_PDF: readonly ListFormat[] = ['json', 'csv'];
const WITH_PDF: readonly ListFormat[] = ['json', 'csv', 'pdf'];
const CSV_TYPE = { 'content-type': 'text/csv; charset=utf-8' } as const;
const PDF_TYPE = { 'content-type': 'application/pdf' } as const;

export function resourceEndpoint(res: Resource, overrides: Partial<Record<Verb, Handler>> = {}): Endpoint {
  const { def } = res;
  const query = (c: Call) => parseQuery(def, c.verb, c, c.orderHeader, c.ctx.catalog.lookup, c.ctx.limits);
  const generic: Record<Verb, Handler> = {
    GET: (c) => listReply(c, def, query(c), res.printed),
    async POST(c) {
      const q = query(c);
      const [body] = bodyObjects(c.json(), 'POST');
      return updated(await updateRecords(c.ctx, res, q, body!, c.ifMatch, updated));
    },
    async PUT(c) {
      query(c);
      if (c.csv === undefined) return created(await createRecords(c.ctx, res, bodyObjects(c.json(), 'PUT'), created));
      const r = await importCsv(c.ctx, res, c.csv, c.dryRun, created);
      return 'ids' in r ? created(r.ids) : { response: `{"records_valid":${r.valid}}` };
    },
    async DELETE(c) {
      const q = query(c);
      return deleted(await deleteRecords(c.ctx, res, q, c.ifMatch, deleted));
    },
  };
  const handlers: Partial<Record<Verb, Handler>> = {};
  for (const verb of def.verbs) handlers[verb] = overrides[verb] ?? generic[verb];
  return { name: def.name, handlers, access: def.access, csvImport: handlers.PUT === generic.PUT, printable: res.printed !== undefined && handlers.GET === generic.GET };
}
