// The audit log: append-only. PUT adds a note; nothing in
// the API can change or remove an entry.
import { sql } from 'kysely';
import { insertAuditEntry } from '../engine/audit.ts';
import { bodyObjects, readFields } from '../engine/body.ts';
import { created, resourceEndpoint } from '../engine/endpoint.ts';
import { parseQuery } from '../engine/query.ts';
import { inWriteTx } from '../engine/write.ts';
import { invalidValue, tooMany } from '../errors.ts';
import { embed, id, ASSET_SHORT } from './fields.ts';
import type { Endpoint, Resource } from '../engine/types.ts';

const int = (name: string) => ({ name, type: 'int', nullable: true }) as const;
const json = (name: string) => ({ name, type: 'json', objectOnly: true }) as const;

export const auditlog: Resource = {
  def: {
    name: 'auditlog', table: 'auditlog', verbs: ['GET', 'PUT'], scopeColumn: 'company_id',
    access: { GET: 'readonly', PUT: 'user', POST: 'admin', DELETE: 'admin' },
    // Entries about users, logins and sessions: basic mode and admin sessions only;
    // so are those about messages, whose text a session below admin may not see.
    visible: (c) => (c.level === 'user' || c.level === 'readonly'
      ? sql`${sql.ref(`${c.alias}.endpoint`)} NOT IN ('users', 'login', 'logout', 'password', 'sessions', 'webhooks', 'messages')` : null),
    fields: [
      id,
      { ...int('asset_id'), writable: 'create', references: { resource: 'assets', rule: 'in-scope', onDelete: 'keep' } },
      int('company_id'), int('user_id'), int('file_id'),
      { name: 'logdate', type: 'datetime' },
      { name: 'message', type: 'string', writable: 'create', required: true },
      json('olddata'), json('newdata'),
      { name: 'endpoint', type: 'string' }, int('record_id'), { name: 'action', type: 'string' }, int('client_id'),
      { name: 'ip', type: 'string', nullable: true },
    ],
    relations: [
      embed('asset', 'assets', 'asset_id', 'null', ASSET_SHORT), embed('company', 'companies', 'company_id'),
      embed('user', 'users', 'user_id'), embed('file', 'files', 'file_id'),
    ],
  },
};

/** PUT auditlog: `{"message": "...", "asset_id"?: N}` adds a note about the asset (or the caller's company). */
export const auditlogEndpoint: Endpoint = resourceEndpoint(auditlog, {
  async PUT(c) {
    const { ctx } = c;
    parseQuery(auditlog.def, 'PUT', c, undefined, ctx.catalog.lookup, ctx.limits);
    const items = bodyObjects(c.json(), 'PUT');
    if (items.length > ctx.limits.maxBatch) throw tooMany(items.length, ctx.limits.maxBatch);
    const notes = items.map((o) => readFields(auditlog.def, o, 'create', ctx.limits));
    // readFields checks only what is sent; a note without a message is no note.
    if (notes.some((n) => typeof n.message !== 'string')) throw invalidValue('message');
    const ids = await inWriteTx(ctx, async (tx) => {
      const out: number[] = [];
      for (const note of notes) {
        const assetId = note.asset_id === undefined || note.asset_id === null ? null : Number(note.asset_id);
        const asset = assetId === null ? null : await tx.find(ctx.catalog.lookup('assets'), assetId);
        if (assetId !== null && !asset) throw invalidValue('asset_id');
        out.push(await insertAuditEntry(ctx, tx.db, tx.now, {
          endpoint: 'auditlog', action: 'note', message: String(note.message), recordId: null,
          companyId: asset ? Number(asset.company_id) : ctx.principal.companyId, assetId,
        }));
      }
      return out;
    }, created);
    return created(ids);
  },
});
