// File references. Content arrives through `upload`.
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import type { Row } from '../model/types.ts';
import { takeAssetCompany } from './owned.ts';
import { ADMIN_WRITES, ASSET_SHORT, ALL_VERBS, data, embed, id, modified, version, text, USER_CREATES } from './fields.ts';
import type { Ctx, Resource, WriteTx } from '../engine/types.ts';

/** `token` is the secret part of the file's upload URL. */
async function beforeCreate(tx: WriteTx, record: Row): Promise<void> {
  await takeAssetCompany(tx, record);
  record.token = randomUUID();
}

/** The lock an upload and the removal of unused content take on the same content. */
export const blobLock = (ctx: Ctx, blobId: string) => ctx.database.hooks.lockFor(`blob:${blobId}`);

/** Removes stored content once no file record refers to it any more (content is shared by equal uploads). */
export async function removeUnusedBlob(ctx: Ctx, blobId: string): Promise<void> {
  const { blobs } = ctx;
  if (!blobs) return;
  await ctx.database.transaction(async (db) => {
    await blobLock(ctx, blobId).execute(db);
    const { rows } = await sql`SELECT id FROM files WHERE upload_uuid = ${blobId} LIMIT 1`.execute(db);
    if (rows.length === 0) await blobs.remove(blobId);
  });
}

export const files: Resource = {
  def: {
    name: 'files', table: 'files', verbs: ALL_VERBS, scopeColumn: 'company_id', access: { ...ADMIN_WRITES, PUT: USER_CREATES.PUT },
    fields: [
      id,
      { name: 'upload_uuid', type: 'string', nullable: true },
      { name: 'upload_endpoint', type: 'string', computed: (c) => sql`(${c.hooks.cast(c.p.baseUrl, 'text')} || '/3.0/upload/' || ${sql.ref(`${c.alias}.token`)})` },
      { name: 'filedate', type: 'date', writable: 'always', default: 'today' },
      text('description'),
      text('filename', { format: 'filename' }),
      { name: 'asset_id', type: 'int', writable: 'create', required: true, references: { resource: 'assets', rule: 'same-company', onDelete: 'restrict' } },
      { name: 'company_id', type: 'int' },
      { ...data, nullable: false, objectOnly: true, default: '{}' },
      { name: 'mimetype', type: 'string', nullable: true },
      { name: 'size', type: 'int', nullable: true },
      modified, version,
    ],
    relations: [embed('asset', 'assets', 'asset_id', 'null', ASSET_SHORT), embed('company', 'companies', 'company_id')],
    events: {},
    audit: { asset: 'asset_id', file: 'id' },
  },
  hooks: {
    beforeCreate,
    beforeDelete(tx, rows) {
      for (const id of new Set(rows.map((r) => r.upload_uuid).filter((u): u is string => typeof u === 'string'))) {
        tx.afterCommit(() => removeUnusedBlob(tx.ctx, id));
      }
    },
  },
};
