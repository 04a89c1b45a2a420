// Uploaded file content: streamed to a temporary file while its
// SHA-256 is computed, then renamed to a content-addressed name — so memory does
// not grow with the file, and a half-written upload is never visible.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ApiError, tooLarge } from '../errors.ts';

export interface FileType { readonly mimetype: string; readonly extension: string }

/** Types are told by their first bytes, never by what the client says. */
const SIGNATURES: readonly (readonly [Buffer, FileType])[] = [
  [Buffer.from('%PDF-'), { mimetype: 'application/pdf', extension: 'pdf' }],
  [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), { mimetype: 'image/png', extension: 'png' }],
  [Buffer.from('GIF87a'), { mimetype: 'image/gif', extension: 'gif' }],
  [Buffer.from('GIF89a'), { mimetype: 'image/gif', extension: 'gif' }],
  [Buffer.from([0xff, 0xd8, 0xff]), { mimetype: 'image/jpeg', extension: 'jpg' }],
];
const SNIFF_BYTES = 8;

export function detectType(head: Buffer): FileType | null {
  return SIGNATURES.find(([magic]) => head.length >= magic.length && head.subarray(0, magic.length).equals(magic))?.[1] ?? null;
}

export const badFileType = () => new ApiError(415, 'bad_file_type',
  'Invalid file type for upload. The only supported file types are PDF, PNG, GIF and JPG', { connection: 'close' });
export const storageError = (what: string) => new ApiError(503, 'storage', `Storage exception: ${what}`);

export interface StoredBlob { readonly id: string; readonly size: number; readonly type: FileType }

/** Content received in full but not yet in place: `BlobStore.commit` moves it there. */
export interface PendingBlob extends StoredBlob { readonly tmp: string }

export class BlobStore {
  constructor(readonly root: string) {}

  pathOf(id: string): string {
    if (!/^[0-9a-f]{64}$/.test(id)) throw new Error('not a blob id');
    return join(this.root, id.slice(0, 2), id);
  }

  /** Streams `body` to a temporary file; refuses (and keeps nothing of) a wrong type or an over-size body. */
  async receive(body: Readable, maxBytes: number): Promise<PendingBlob> {
    const tmpDir = join(this.root, 'tmp');
    await mkdir(tmpDir, { recursive: true }).catch((e: Error) => { throw storageError(e.message); });
    const tmp = join(tmpDir, `${randomBytes(12).toString('hex')}.part`);
    const file = await open(tmp, 'wx').catch((e: Error) => { throw storageError(e.message); });
    const hash = createHash('sha256');
    let size = 0;
    let head = Buffer.alloc(0);
    let type: FileType | null = null;
    try {
      // Refused mid-way (413, file type), the request stays whole so that the answer reaches the client.
      for await (const chunk of body.iterator({ destroyOnReturn: false })) {
        const bytes = chunk as Buffer;
        size += bytes.length;
        if (size > maxBytes) throw tooLarge(maxBytes);
        if (!type) {
          head = Buffer.concat([head, bytes]).subarray(0, SNIFF_BYTES);
          type = detectType(head);
          if (!type && head.length >= SNIFF_BYTES) throw badFileType();
        }
        hash.update(bytes);
        await file.write(bytes);
      }
      if (!type) throw badFileType();
      await file.sync();
    } catch (e) {
      await file.close().catch(() => {});
      await rm(tmp, { force: true });
      throw e instanceof ApiError ? e : storageError((e as Error).message);
    }
    await file.close();
    return { id: hash.digest('hex'), size, type, tmp };
  }

  /**
   * Puts received content in place under its SHA-256 (atomic rename). Callers do
   * this while holding the blob's lock, the one the removal of unused content takes.
   */
  async commit(blob: PendingBlob): Promise<void> {
    try {
      await mkdir(join(this.root, blob.id.slice(0, 2)), { recursive: true });
      await rename(blob.tmp, this.pathOf(blob.id));
    } catch (e) {
      throw storageError((e as Error).message);
    }
  }

  async discard(blob: PendingBlob): Promise<void> {
    await rm(blob.tmp, { force: true });
  }

  async open(id: string): Promise<{ stream: ReadStream; size: number }> {
    const path = this.pathOf(id);
    const { size } = await stat(path).catch((e: Error) => { throw storageError(e.message); });
    return { stream: createReadStream(path), size };
  }

  async remove(id: string): Promise<void> {
    await rm(this.pathOf(id), { force: true });
  }
}
