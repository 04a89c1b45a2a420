// An endpoint answers the verbs it supports; resource endpoints get their
// handlers from the generic engine. Nothing here knows about HTTP.
import type { Readable } from 'node:stream';
import type { JsonValue } from '../model/json.ts';
import type { Principal } from '../model/principal.ts';
import type { Need, ResourceDef, Verb } from '../model/types.ts';
import { bodyObjects } from './body.ts';
import { csvExport, wantsCsv } from './csv.ts';
import { importCsv } from './csv-import.ts';
import type { Ctx } from './context.ts';
import { listRecords, pageReply } from './list.ts';
import { parseQuery, type Query } from './query.ts';
import type { Resource } from './resource.ts';
import { type DeleteResult, deleteRecords } from './remove.ts';
import { type UpdateResult, updateRecords } from './update.ts';
import { createRecords } from './write.ts';

export interface Call {
  readonly ctx: Ctx;
  readonly verb: Verb;
  /** Raw path segments after the endpoint name. */
  readonly segments: readonly string[];
  readonly orderHeader: string | undefined;
  /** The Accept header: `text/csv` asks a list for CSV (spec §14.4). */
  readonly accept: string | undefined;
  /** The parsed JSON body (undefined when empty); throws `malformed_json`. Read it after the filters. */
  json(): JsonValue | undefined;
  /** A PUT's body when it came as text/csv (an import, spec §14.4). */
  readonly csv: string | undefined;
  /** `X-Dry-Run: true`: an import checks its rows and writes nothing. */
  readonly dryRun: boolean;
  /** The If-Match header: a POST or DELETE applies only to records as the client saw them (spec §14.2). */
  readonly ifMatch: string | undefined;
  /** The unread request body, for endpoints that stream it, and its declared length. */
  readonly stream: Readable;
  readonly contentLength: number | undefined;
}

export interface Pagination { readonly total_pages: number; readonly total_records: number }

export interface Reply {
  readonly status?: number;
  /** The `response` member as JSON text. */
  readonly response: string;
  readonly pagination?: Pagination;
  /** Instead of the envelope: a file's bytes with their headers (downloads). */
  readonly file?: { readonly stream: Readable; readonly headers: Readonly<Record<string, string>> };
}

export type Handler = (call: Call) => Promise<Reply>;

export interface Endpoint {
  readonly name: string;
  readonly handlers: Partial<Record<Verb, Handler>>;
  /** Least session level per verb (missing: admin). */
  readonly access: Partial<Record<Verb, Need>>;
  /** The body is streamed by the handler instead of read (and size-limited) up front. */
  readonly streamsBody?: boolean;
  /** Answers without a session check (login). */
  readonly sessionless?: boolean;
  /** PUT takes a CSV import (spec §14.4). */
  readonly csvImport?: boolean;
  /** Replaces the level check of `access` (login needs an impersonation certificate instead). */
  authorize?(p: Principal, verb: Verb): void;
}

export const counts = (a: string, an: number, b: string, bn: number) => `{${JSON.stringify(a)}:${an},${JSON.stringify(b)}:${bn}}`;

const updated = (r: UpdateResult): Reply => ({ response: counts('records_updated', r.updated, 'records_found', r.found) });
const deleted = (r: DeleteResult): Reply => ({ response: counts('records_deleted', r.deleted, 'records_found', r.found) });

/** The PUT reply: 201 with the new ids. */
export const created = (ids: readonly number[]): Reply =>
  ({ status: 201, response: `{"records_inserted":${ids.length},"ids":[${ids.join(',')}]}` });

/** The GET reply: a page of records with the pagination of the whole match, or (Accept: text/csv) every match as CSV. */
export async function listReply(c: Call, def: ResourceDef, q: Query): Promise<Reply> {
  const { ctx } = c;
  if (wantsCsv(c.accept)) return { response: '', file: { stream: await csvExport(ctx, def, q), headers: CSV_TYPE } };
  return pageReply(await listRecords(ctx, def, q), ctx.limits.pageSize);
}

const CSV_TYPE = { 'content-type': 'text/csv; charset=utf-8' } as const;

export function resourceEndpoint(res: Resource, overrides: Partial<Record<Verb, Handler>> = {}): Endpoint {
  const { def } = res;
  const query = (c: Call) => parseQuery(def, c.verb, c.segments, c.orderHeader, c.ctx.catalog.lookup, c.ctx.limits);
  const generic: Record<Verb, Handler> = {
    GET: (c) => listReply(c, def, query(c)),
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
  return { name: def.name, handlers, access: def.access, csvImport: handlers.PUT === generic.PUT };
}
