// POST /3.0/upload/<token> stores a file's content; GET returns it (spec §7.10, §8.3).
// The segment after `upload/` is the file's token, not a filter.
import { sql } from 'kysely';
import { counts, type Call, type Endpoint } from '../engine/endpoint.ts';
import { scopeCte } from '../engine/scope.ts';
import { visibility } from '../engine/select.ts';
import { inWriteTx, updateRecord } from '../engine/write.ts';
import { accessDenied, notFound, tooLarge } from '../errors.ts';
import type { Row } from '../model/types.ts';
import { type BlobStore, storageError } from '../storage/blobs.ts';
import { files, removeUnusedBlob } from './files.ts';

const missing = (token: string) => notFound(`Upload ${token} does not exist`);

async function fileOf(c: Call): Promise<{ token: string; row: Row }> {
  const token = c.segments.join('/');
  const { ctx } = c;
  const { rows } = await sql<Row>`${scopeCte(ctx.principal.companyId)} SELECT t.* FROM files AS t
    WHERE t.token = ${token} AND ${sql.join(visibility(ctx, files.def, 't'), sql` AND `)}`.execute(ctx.database.db);
  if (c.segments.length !== 1 || !rows[0]) throw missing(token);
  return { token, row: rows[0] };
}

const attachment = (name: string) => `attachment; filename="${name.replace(/["\\\r\n]/g, '_')}"`;

export function uploadEndpoint(blobs: BlobStore, maxBytes: number): Endpoint {
  return {
    name: 'upload',
    access: { POST: 'user', GET: 'readonly' },
    streamsBody: true,
    handlers: {
      async POST(c) {
        const { ctx } = c;
        const { token, row } = await fileOf(c);
        const { session, level } = ctx.principal;
        // Replacing content needs basic mode or an admin session.
        if (row.upload_uuid !== null && session && level !== 'admin') throw accessDenied('POST', 'upload', 'admin');
        if (c.contentLength !== undefined && c.contentLength > maxBytes) throw tooLarge(maxBytes);
        const blob = await blobs.put(c.stream, maxBytes);
        await inWriteTx(ctx, async (tx) => {
          const current = await tx.find(files.def, Number(row.id));
          if (!current) throw missing(token);
          const filename = current.filename ? String(current.filename) : `${token}.${blob.type.extension}`;
          await updateRecord(tx, files, current, { upload_uuid: blob.id, mimetype: blob.type.mimetype, size: blob.size, filename });
          const previous = current.upload_uuid;
          if (typeof previous === 'string' && previous !== blob.id) tx.afterCommit(() => removeUnusedBlob(tx.ctx, previous));
        });
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
