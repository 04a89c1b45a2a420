// Conditional writes. POST and DELETE with If-Match apply only when
// the records they match are as the client last saw them: all at one version, or
// exactly the records (at their versions) of the GET that gave an ETag. The check
// runs in the write's own transaction, once the matched records are locked and
// before anything is written (and the ETag's GET is read on the transaction's own
// connection), so of two racing writes with the same precondition one wins and
// the other is refused with nothing written.
import { sql } from 'kysely';
import { Param } from '../db/statements.ts';
import { invalidValue, preconditionFailed } from '../errors.ts';
import type { ResourceDef } from '../model/types.ts';
import { etagOf } from './etag.ts';
import { listRecords, pageReply, readerOf } from './list.ts';
import { columnOf } from './select.ts';
import type { Matched, Precondition, Query, WriteTx } from './types.ts';

const VERSION = /^\d{1,15}$/;
/** An entity tag of RFC 9110 §8.8.3, weak or strong; its opaque part is captured. */
const TAG = /^(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")$/;

/** The If-Match header as a precondition (null when absent); anything else is 400 invalid_value. */
export function readIfMatch(header: string | undefined): Precondition | null {
  if (header === undefined) return null;
  const sent = header.trim();
  if (sent === '*') return { kind: 'any', sent };
  if (VERSION.test(sent)) return { kind: 'version', sent, version: Number(sent) };
  const tags = sent.split(',').map((t) => TAG.exec(t.trim())?.[1]);
  if (tags.length === 0 || tags.some((t) => t === undefined)) throw invalidValue('If-Match');
  return { kind: 'etag', sent, tags: tags as string[] };
}

const opaque = (etag: string) => etag.replace(/^W\//, '');

/** Throws 412 unless the matched records meet the precondition. */
export async function checkPrecondition(tx: WriteTx, def: ResourceDef, query: Query, matched: Matched, pre: Precondition): Promise<void> {
  if (matched.count === 0 || !(await holds(tx, def, query, matched, pre))) throw preconditionFailed(pre.sent);
}

async function holds(tx: WriteTx, def: ResourceDef, query: Query, matched: Matched, pre: Precondition): Promise<boolean> {
  switch (pre.kind) {
    case 'any': return true;
    case 'version': {
      const counter = def.fields.find((f) => f.counter);
      if (!counter) return false;
      const { rows } = await tx.run(`version-check|${def.name}|${matched.key}`, () => sql`SELECT t.id FROM ${sql.table(def.table)} AS t
        WHERE ${matched.where} AND ${sql.ref(`t.${columnOf(counter)}`)} <> ${tx.shape.hooks.cast(new Param('version'), 'int')} LIMIT 1`,
      { ...matched.values, version: pre.version });
      return rows.length === 0;
    }
    case 'etag': {
      // The GET of the same filters, first page, default order: the only one whose tag can show every matched record.
      const { pageSize } = tx.ctx.limits;
      if (matched.count > pageSize) return false;
      const page = await listRecords(tx.ctx, def, { conditions: query.conditions, order: [], page: 1 }, readerOf(tx.db));
      const { response, pagination } = pageReply(page, pageSize);
      return pre.tags.includes(opaque(etagOf(response, pagination)));
    }
  }
}
