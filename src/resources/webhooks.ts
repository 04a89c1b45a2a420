// Webhooks: receivers of the events of a company's tree. Basic mode or
// admin sessions only. The secret is made by the service, returned once by the PUT
// that creates the webhook (`secrets`, in the order of `ids`) and never again; it is
// no field, so no GET, audit entry or event shows it.
import { sql } from 'kysely';
import { created, resourceEndpoint } from '../engine/endpoint.ts';
import { bodyObjects } from '../engine/body.ts';
import { insertRecords, readCreates } from '../engine/create.ts';
import { inWriteTx } from '../engine/write.ts';
import { invalidValue } from '../errors.ts';
import { parseJson } from '../model/json.ts';
import { parseQuery } from '../engine/query.ts';
import { knownEvents, readEventList } from '../events/names.ts';
import { newSecret } from '../events/secret.ts';
import { ADMIN_ONLY, ALL_VERBS, companyId, data, flag, id, modified, version, required } from './fields.ts';
import type { Endpoint, Resource } from '../engine/types.ts';

/** An https URL with a host and no credentials. */
export function checkUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

export const webhooks: Resource = {
  def: {
    name: 'webhooks', table: 'webhooks', verbs: ALL_VERBS, scopeColumn: 'company_id', access: ADMIN_ONLY,
    fields: [
      id, companyId, required('url'), { name: 'events', type: 'json', writable: 'always', required: true, nameList: true },
      flag('active', 1), data, { name: 'created', type: 'datetime', default: 'now' }, modified, version,
    ],
    relations: [],
    events: {},
  },
  hooks: {
    validate(ctx, values) {
      if (values.url !== undefined && (typeof values.url !== 'string' || !checkUrl(values.url))) throw invalidValue('url');
      if (values.events !== undefined) {
        const list = values.events === null ? null : readEventList(parseJson(String(values.events)), knownEvents(ctx.catalog));
        if (!list) throw invalidValue('events');
      }
    },
    async beforeCreate(tx, record) {
      record.secret = newSecret();
      // A new webhook hears what is committed from now on.
      const { rows } = await sql<{ seq: number | null }>`SELECT MAX(seq) AS seq FROM events`.execute(tx.db);
      record.cursor = Number(rows[0]?.seq ?? 0);
    },
  },
};

/** The PUT answer carries each new webhook's secret, once (and again only to a retry with its Idempotency-Key). */
export const webhooksEndpoint: Endpoint = resourceEndpoint(webhooks, {
  async PUT(c) {
    const { ctx } = c;
    parseQuery(webhooks.def, c.verb, c, c.orderHeader, ctx.catalog.lookup, ctx.limits);
    const records = readCreates(ctx, webhooks, bodyObjects(c.json(), 'PUT'));
    return inWriteTx(ctx, async (tx) => {
      const ids = await insertRecords(tx, webhooks, records);
      const rows = await tx.db.selectFrom('webhooks').select(['id', 'secret']).where('id', 'in', ids).execute();
      const secret = new Map(rows.map((r) => [Number(r.id), String(r.secret)]));
      const reply = created(ids);
      return { ...reply, response: `${reply.response.slice(0, -1)},"secrets":${JSON.stringify(ids.map((i) => secret.get(i)))}}` };
    }, (reply) => reply);
  },
});
