// POST /3.0/upload/<token> stores a file's content; GET returns it.
// The segment after `upload/` is the file's token, not a filter.
import { sql } from 'kysely';
import { counts } from '../engine/endpoint.ts';
import { fieldsJson, recordEntry } from '../engine/audit.ts';
import { shapeOf } from '../engine/context.ts';
import { readRows } from '../engine/params.ts';
import { visible } from '../engine/select.ts';
import { updateRecord } from '../engine/update.ts';
import { inWriteTx } from '../engine/write.ts';
import { Param } from '../db/statements.ts';
import { accessDenied, notFound, tooLarge } from '../errors.ts';
import type { Row } from '../model/types.ts';
import { type BlobStore, type PendingBlob, storageError } from '../storage/blobs.ts';
import { blobLock, files, removeUnusedBlob } from './files.ts';
import type { Call, Ctx, Endpoint } from '../engine/types.ts';

const TOKEN = new Param('token');

const missing = (token: string) => notFound(`Upload ${token} does not exist`);

async function fileOf(c: Call): Promise<{ token: string; row: Row }> {
  const token = c.segments.join('/');
  const { ctx } = c;
  const rows = await readRows<Row>(ctx, 'upload-file', () => sql`SELECT t.* FROM files AS t
    WHERE t.token = ${TOKEN} AND ${visible(shapeOf(ctx), files.def, 't')}`, { token });
  if (c.segments.length !== 1 || !rows[0]) throw missing(token);
  return { token, row: rows[0] };
}

/** RFC 6266: a plain-ASCII `filename` and, for any other name, the exact one as UTF-8 in `filename*` (header text must be Latin-1). */
function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  if (ascii === name) return `attachment; filename="${name}"`;
  const utf8 = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${utf8}`;
}

/** A name the upload generated (`<token>.<ext>`) follows the content; a name the client set stays. */
const GENERATED = ['pdf', 'png', 'gif', 'jpg'];
const generatedName = (token: string, filename: string) => filename === '' || GENERATED.some((ext) => filename === `${token}.${ext}`);

/**
 * Puts received content in place and points the file record at it (audited), in
 * one transaction holding the content's lock; content the record no longer uses
 * is removed after the commit.
 */
export async function attachContent(ctx: Ctx, file: Row, blob: PendingBlob, mayReplace: boolean): Promise<void> {
  const token = String(file.token);
  const { blobs } = ctx;
  if (!blobs) throw storageError('no file storage is configured');
  try {
    await inWriteTx(ctx, async (tx) => {
      const current = await tx.find(files.def, Number(file.id));
      if (!current) throw missing(token);
      if (current.upload_uuid !== null && !mayReplace) throw accessDenied('POST', 'upload', 'admin');
      await blobLock(ctx, blob.id).execute(tx.db);
      await blobs.commit(blob);
      const filename = generatedName(token, String(current.filename ?? '')) ? `${token}.${blob.type.extension}` : String(current.filename);
      const changed = await updateRecord(tx, files, current, { upload_uuid: blob.id, mimetype: blob.type.mimetype, size: blob.size, filename });
      // The same bytes again change no field, but the upload is still recorded.
      if (!changed) {
        const content = fieldsJson(files.def.fields.filter((f) => f.name === 'upload_uuid'), current);
        tx.audit(recordEntry(files.def, 'update', current, content, content, `Uploaded the same content to files record ${String(current.id)}`));
      }
      const previous = current.upload_uuid;
      if (typeof previous === 'string' && previous !== blob.id) tx.afterCommit(() => removeUnusedBlob(tx.ctx, previous));
    });
  } finally {
    await blobs.discard(blob);
  }
}

export function uploadEndpoint(blobs: BlobStore, maxBytes: number): Endpoint {
  return {
    name: 'upload',
    access: { POST: 'user', GET: 'readonly' },
    streamsBody: true,
    handlers: {
      async POST(c) {
        const { ctx } = c;
        const { row } = await fileOf(c);
        const { session, level } = ctx.principal;
        // Replacing content needs basic mode or an admin session.
        const mayReplace = !session || level === 'admin';
        if (row.upload_uuid !== null && !mayReplace) throw accessDenied('POST', 'upload', 'admin');
        if (c.contentLength !== undefined && c.contentLength > maxBytes) throw tooLarge(maxBytes);
        await attachContent({ ...ctx, blobs }, row, await blobs.receive(c.stream, maxBytes), mayReplace);
        return { response: counts('records_updated', 1, 'records_found', 1) };
      },
      async GET(c) {
        const { token, row } = await fileOf(c);
        if (typeof row.upload_uuid !== 'string') throw missing(token);
        const { stream, size } = await blobs.open(row.upload_uuid).catch(() => { throw storageError(`content of upload ${token} is unavailable`); });
        return {
          response: '',
          file: {
            stream,
            headers: {
              'content-type': String(row.mimetype ?? 'application/octet-stream'), 'content-length': String(size),
              'content-disposition': attachment(String(row.filename || token)), 'x-content-type-options': 'nosniff',
            },
          },
        };
      },
    },
  };
}
