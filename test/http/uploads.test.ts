// Files and uploads over real HTTPS: accepted and
// refused types, size limits with and without Content-Length, scope, replacing
// and removing content, session levels, memory while streaming 25 MiB, and the
// published PHP client's exact round trip.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BlobStore } from '../../src/storage/blobs.ts';
import type { TestCert } from '../support/certs.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type DbKind, type Service, startService } from '../support/harness.ts';
import { bytes, getRaw, login, memorySampler, type MemoryReading, settledMemory, streamRequest, uniqueName, user } from '../support/workflows.ts';
import { create, expectError, expectOk, FILE_FIELDS, keys, list, one, stop, recordKeys } from './resources-support.ts';
import type { FileRecord, Inserted } from '../support/api.ts';

const BAD_TYPE = 'Invalid file type for upload. The only supported file types are PDF, PNG, GIF and JPG';
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n'), ALL_BYTES]);
const PNG = Buffer.concat([Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'), ALL_BYTES]);
const GIF = Buffer.concat([Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'), ALL_BYTES]);
const GIF87 = Buffer.concat([Buffer.from('GIF87a'), Buffer.from([1, 0, 1, 0, 0, 0, 0, 0x3b])]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.from([1, 1, 0, 0, 1, 0, 1, 0, 0]),
  ALL_BYTES, Buffer.from([0xff, 0xd9])]);
const TYPES = [
  { name: 'PDF', content: PDF, mimetype: 'application/pdf', ext: 'pdf' },
  { name: 'PNG', content: PNG, mimetype: 'image/png', ext: 'png' },
  { name: 'GIF89a', content: GIF, mimetype: 'image/gif', ext: 'gif' },
  { name: 'GIF87a', content: GIF87, mimetype: 'image/gif', ext: 'gif' },
  { name: 'JPEG', content: JPEG, mimetype: 'image/jpeg', ext: 'jpg' },
] as const;
const REFUSED: readonly (readonly [string, Buffer])[] = [
  ['text', Buffer.from('just some text, not a document')],
  ['ZIP', Buffer.concat([Buffer.from('PK\u0003\u0004'), ALL_BYTES])],
  ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')],
  ['HTML', Buffer.from('<!doctype html><script>alert(1)</script>')],
  ['a PDF signature after one space', Buffer.concat([Buffer.from(' '), PDF])],
  ['a truncated PNG signature', PNG.subarray(0, 4)],
  ['an empty body', Buffer.alloc(0)],
];
const MiB = 1024 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Memory held while a body streams through stays under 10 MB (RSS, and bytes in Buffers). */
function assertHeldLittle(baseline: MemoryReading, peak: MemoryReading): void {
  assert.ok(peak.rss - baseline.rss < 10 * 1000 * 1000, `RSS grew by ${peak.rss - baseline.rss} bytes`);
  assert.ok(peak.arrayBuffers - baseline.arrayBuffers < 10 * 1000 * 1000, `Buffers grew by ${peak.arrayBuffers - baseline.arrayBuffers} bytes`);
}

function report(kind: DbKind, what: string, baseline: MemoryReading, peak: MemoryReading): void {
  const mib = (n: number) => (n / MiB).toFixed(1);
  process.stderr.write(`# ${kind}, ${what}: peak growth RSS ${mib(peak.rss - baseline.rss)} MiB, Buffers ${mib(peak.arrayBuffers - baseline.arrayBuffers)} MiB\n`);
}

/** Stored blobs (content-addressed files) and leftovers of unfinished uploads under a BlobStore root. */
function storeContents(root: string): { blobs: string[]; partial: string[] } {
  if (!existsSync(root)) return { blobs: [], partial: [] };
  const blobs: string[] = [];
  let partial: string[] = [];
  for (const d of readdirSync(root)) {
    if (d === 'tmp') partial = readdirSync(join(root, d));
    else blobs.push(...readdirSync(join(root, d)));
  }
  return { blobs: blobs.sort(), partial };
}

interface Tenant { svc: Service; root: string; co: number; cert: TestCert; api: TestClient }

async function tenant(kind: DbKind, options: { uploadMaxBytes?: number } = {}): Promise<Tenant> {
  const root = mkdtempSync(join(tmpdir(), 'asset-tracker-blobs-'));
  const svc = await startService(kind, { blobs: new BlobStore(root), ...options });
  svc.clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
  const co = await svc.company(uniqueName('Files'));
  const { cert, client } = await svc.certificate(co);
  return { svc, root, co, cert, api: client };
}

async function close(t: Tenant | undefined): Promise<void> {
  if (!t) return;
  await stop(t.svc);
  rmSync(t.root, { recursive: true, force: true });
}

/** A new asset with one file record; returns the file id and its upload token. */
async function newFile(api: TestClient, fields: object = {}): Promise<{ id: number; token: string; asset: number }> {
  const asset = await create(api, 'assets', { asset_no: uniqueName('F') });
  const id = await create(api, 'files', { asset_id: asset, description: 'certificate', ...fields });
  const file = await one(api, 'files', id);
  const token = String(file.upload_endpoint).split('/').pop()!;
  return { id, token, asset };
}

const upload = (api: TestClient, token: string, body: Buffer, headers: Record<string, string> = {}) =>
  api.request('POST', `/3.0/upload/${token}`, { body, headers: { 'content-type': 'application/octet-stream', ...headers } });

for (const kind of DB_KINDS) {
  describe(`uploads (${kind})`, () => {
    let t: Tenant;
    before(async () => { t = await tenant(kind); });
    after(() => close(t));

    it('a file record starts without content, with its upload endpoint under BASE_URL', async () => {
      const { id, token, asset } = await newFile(t.api);
      const file = await one(t.api, 'files', id);
      assert.deepEqual(keys(file), recordKeys(FILE_FIELDS, 'asset', 'company'));
      assert.match(token, UUID_V4);
      assert.equal(file.upload_endpoint, `${t.svc.baseUrl}/3.0/upload/${token}`);
      assert.deepEqual([file.upload_uuid, file.filename, file.mimetype, file.size, file.asset_id, file.company_id, file.data],
        [null, '', null, null, asset, t.co, {}]);
      expectError(await t.api.get(`/3.0/upload/${token}`), 404, `Upload ${token} does not exist`);
    });

    // Content-Types that say nothing of the bytes, down to ones that are no media type at all.
    const claimed = ['text/plain', 'foo', 'image/gif, text/plain', 'application/x-www-form-urlencoded'];
    for (const [i, type] of TYPES.entries()) {
      it(`accepts ${type.name} (told by its bytes, whatever the Content-Type) and gives the same bytes back`, async () => {
        const { id, token } = await newFile(t.api);
        const res = await upload(t.api, token, type.content, { 'content-type': claimed[i % claimed.length]! });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.text.includes('"response":{"records_updated":1,"records_found":1}'), true, res.text);
        const file = await one(t.api, 'files', id);
        assert.match(file.upload_uuid, /^[0-9a-f]{64}$/);
        assert.equal(file.upload_uuid, sha256(type.content), 'content-addressed by SHA-256');
        assert.deepEqual([file.filename, file.mimetype, file.size], [`${token}.${type.ext}`, type.mimetype, type.content.length]);
        const down = await getRaw(t.svc.port, t.cert, `/3.0/upload/${token}`);
        assert.equal(down.status, 200);
        assert.ok(down.raw.equals(type.content), 'byte for byte');
        assert.equal(down.headers['content-type'], type.mimetype);
        assert.match(String(down.headers['content-disposition']), new RegExp(`^attachment;.*filename="${token}\\.${type.ext}"`));
        assert.equal(down.headers['x-content-type-options'], 'nosniff');
        assert.equal(down.headers['content-length'], String(type.content.length));
        const stored = new BlobStore(t.root).pathOf(file.upload_uuid);
        assert.ok(readFileSync(stored).equals(type.content));
      });
    }

    it('keeps a filename that was set, and serves names with any characters but / \\ and controls', async () => {
      const { id, token } = await newFile(t.api, { filename: 'Calibration report.pdf' });
      expectOk(await upload(t.api, token, PDF));
      assert.equal((await one(t.api, 'files', id)).filename, 'Calibration report.pdf');
      const down = await getRaw(t.svc.port, t.cert, `/3.0/upload/${token}`);
      assert.match(String(down.headers['content-disposition']), /^attachment;.*filename="Calibration report\.pdf"/);
      const unicode = await newFile(t.api, { filename: 'Prüfbericht 測定 "2024".pdf' });
      expectOk(await upload(t.api, unicode.token, PDF));
      const d2 = await getRaw(t.svc.port, t.cert, `/3.0/upload/${unicode.token}`);
      assert.equal(d2.status, 200, d2.text);
      assert.ok(d2.raw.equals(PDF));
      const disposition = String(d2.headers['content-disposition']);
      assert.match(disposition, /^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''/);
      assert.equal(decodeURIComponent(disposition.split("filename*=UTF-8''")[1]!), 'Prüfbericht 測定 "2024".pdf');
      for (const bad of ['a/b.pdf', 'a\\b.pdf', 'a\nb.pdf', 'a\u0000b.pdf']) {
        expectError(await t.api.put('/3.0/files', { asset_id: unicode.asset, filename: bad }), 400, 'Field verification failed, invalid value for filename');
      }
    });

    for (const [what, content] of REFUSED) {
      it(`refuses ${what} with 415 and keeps nothing`, async () => {
        const { id, token } = await newFile(t.api);
        const before = storeContents(t.root);
        expectError(await upload(t.api, token, content, { 'content-type': 'application/pdf' }), 415, BAD_TYPE);
        const file = await one(t.api, 'files', id);
        assert.deepEqual([file.upload_uuid, file.filename, file.mimetype, file.size], [null, '', null, null]);
        assert.deepEqual(storeContents(t.root), before);
        expectError(await t.api.get(`/3.0/upload/${token}`), 404, `Upload ${token} does not exist`);
      });
    }

    it('a refused type on a file that has content leaves the content as it was', async () => {
      const { id, token } = await newFile(t.api);
      expectOk(await upload(t.api, token, PNG));
      const before = await one(t.api, 'files', id);
      expectError(await upload(t.api, token, Buffer.from('not an image at all')), 415, BAD_TYPE);
      assert.deepEqual(await one(t.api, 'files', id), before);
      assert.ok((await getRaw(t.svc.port, t.cert, `/3.0/upload/${token}`)).raw.equals(PNG));
    });

    it('a token outside the scope, an unknown token, or no content yet → 404 Upload XXXX does not exist', async () => {
      const other = await t.svc.company(uniqueName('Other'));
      const otherApi = (await t.svc.certificate(other)).client;
      const theirs = await newFile(otherApi);
      expectOk(await upload(otherApi, theirs.token, PDF));
      expectError(await upload(t.api, theirs.token, PNG), 404, `Upload ${theirs.token} does not exist`);
      expectError(await t.api.get(`/3.0/upload/${theirs.token}`), 404, `Upload ${theirs.token} does not exist`);
      // Their content is untouched.
      assert.ok((await getRaw(t.svc.port, (await t.svc.certificate(other)).cert, `/3.0/upload/${theirs.token}`)).raw.equals(PDF));
      // A child company's file is in the parent's scope, not the other way round.
      const child = await t.svc.company(uniqueName('Child'), t.co);
      const childApi = (await t.svc.certificate(child)).client;
      const childFile = await newFile(childApi);
      expectOk(await upload(t.api, childFile.token, GIF));
      assert.equal((await one(childApi, 'files', childFile.id)).mimetype, 'image/gif');
      const mine = await newFile(t.api);
      expectError(await upload(childApi, mine.token, GIF), 404, `Upload ${mine.token} does not exist`);
      const unknown = randomUUID();
      expectError(await upload(t.api, unknown, PDF), 404, `Upload ${unknown} does not exist`);
      expectError(await t.api.get(`/3.0/upload/${unknown}`), 404, `Upload ${unknown} does not exist`);
      expectError(await t.api.get(`/3.0/upload/${mine.token}`), 404, `Upload ${mine.token} does not exist`);
    });

    it('a second upload replaces the content (audited) and removes the old content when nothing uses it', async () => {
      // Contents of this test only, so that no other test's file shares them.
      const [pdf, png, jpeg, gif] = [PDF, PNG, JPEG, GIF].map((b) => Buffer.concat([b, Buffer.from(uniqueName(' replace'))]));
      const { id, token } = await newFile(t.api);
      expectOk(await upload(t.api, token, pdf!));
      const first = await one(t.api, 'files', id);
      const keeper = await newFile(t.api);
      expectOk(await upload(t.api, keeper.token, jpeg!));
      const { id: second, token: secondToken } = await newFile(t.api);
      expectOk(await upload(t.api, secondToken, jpeg!));

      // PDF → PNG: the PDF blob is used by nobody else and goes.
      expectOk(await upload(t.api, token, png!));
      const now = await one(t.api, 'files', id);
      assert.deepEqual([now.upload_uuid, now.mimetype, now.size], [sha256(png!), 'image/png', png!.length]);
      assert.equal(now.filename, `${token}.png`, 'the generated name follows the new content');
      assert.ok((await getRaw(t.svc.port, t.cert, `/3.0/upload/${token}`)).raw.equals(png!));
      assert.ok(!storeContents(t.root).blobs.includes(first.upload_uuid), 'the replaced content is removed');
      const audit = await list(t.api, `auditlog/endpoint=files/record_id=${id}`);
      const updates = audit.filter((e: { action: string }) => e.action === 'update');
      assert.equal(updates.length, 2);
      assert.equal(updates[1]!.olddata.upload_uuid, first.upload_uuid);
      assert.equal(updates[1]!.newdata.upload_uuid, sha256(png!));
      assert.equal(updates[1]!.file_id, id);

      // JPEG → GIF on one of two files sharing the JPEG: the JPEG stays for the other.
      expectOk(await upload(t.api, secondToken, gif!));
      assert.equal((await one(t.api, 'files', second)).mimetype, 'image/gif');
      assert.ok(storeContents(t.root).blobs.includes(sha256(jpeg!)));
      assert.ok((await getRaw(t.svc.port, t.cert, `/3.0/upload/${keeper.token}`)).raw.equals(jpeg!));

      // The same bytes again: 1/1 as always, the content stays, and the upload is audited.
      assert.deepEqual(expectOk(await upload(t.api, token, png!)), { records_updated: 1, records_found: 1 });
      assert.ok((await getRaw(t.svc.port, t.cert, `/3.0/upload/${token}`)).raw.equals(png!));
      assert.ok(storeContents(t.root).blobs.includes(sha256(png!)));
      const again = (await list(t.api, `auditlog/endpoint=files/record_id=${id}/action=update`)).at(-1)!;
      assert.deepEqual([again.olddata, again.newdata, again.file_id, again.message],
        [{ upload_uuid: sha256(png!) }, { upload_uuid: sha256(png!) }, id, `Uploaded the same content to files record ${id}`]);
    });

    it('deleting a file record removes its content unless another file has the same content', async () => {
      const content = Buffer.concat([PDF, Buffer.from(uniqueName('unique content'))]);
      const a = await newFile(t.api);
      const b = await newFile(t.api);
      expectOk(await upload(t.api, a.token, content));
      expectOk(await upload(t.api, b.token, content));
      const blob = sha256(content);
      assert.ok(storeContents(t.root).blobs.includes(blob));
      assert.deepEqual(expectOk(await t.api.delete(`/3.0/files/id=${a.id}`)), { records_deleted: 1, records_found: 1 });
      assert.ok(storeContents(t.root).blobs.includes(blob), 'still used by the other file');
      assert.ok((await getRaw(t.svc.port, t.cert, `/3.0/upload/${b.token}`)).raw.equals(content));
      expectError(await t.api.get(`/3.0/upload/${a.token}`), 404, `Upload ${a.token} does not exist`);
      expectOk(await t.api.delete(`/3.0/files/id=${b.id}`));
      assert.ok(!storeContents(t.root).blobs.includes(blob), 'removed with the last file using it');
      assert.deepEqual(storeContents(t.root).partial, []);
    });

    it('content shared by two file records survives an upload racing the removal of the other record', async () => {
      for (let round = 0; round < 15; round++) {
        const content = Buffer.concat([PDF, Buffer.from(uniqueName(' race content'))]);
        const a = await newFile(t.api);
        const b = await newFile(t.api);
        expectOk(await upload(t.api, a.token, content));
        // B gets the same bytes while A goes; the deletion starts a little later each round, to sweep the upload's steps.
        const [put, removed] = await Promise.all([
          upload(t.api, b.token, content),
          new Promise((r) => setTimeout(r, round % 5)).then(() => t.api.delete(`/3.0/files/id=${a.id}`)),
        ]);
        assert.deepEqual(expectOk(put), { records_updated: 1, records_found: 1 });
        assert.deepEqual(expectOk(removed), { records_deleted: 1, records_found: 1 });
        const down = await getRaw(t.svc.port, t.cert, `/3.0/upload/${b.token}`);
        assert.equal(down.status, 200, `round ${round}: ${down.text}`);
        assert.ok(down.raw.equals(content), `round ${round}: byte for byte`);
        assert.ok(storeContents(t.root).blobs.includes(sha256(content)), `round ${round}`);
      }
      assert.deepEqual(storeContents(t.root).partial, []);
    });

    it('sessions: a user may upload new content, replacing needs admin; readonly may only download', async () => {
      const { cert } = await t.svc.certificate(t.co, { impersonation: true });
      const client = t.svc.client(cert);
      const [plain, admin, readonly] = await Promise.all([user(t.svc, t.co, { level: 'user' }), user(t.svc, t.co, { level: 'admin' }),
        user(t.svc, t.co, { level: 'readonly' })]);
      const asUser = await login(client, plain);
      const asAdmin = await login(client, admin);
      const asReadonly = await login(client, readonly);
      // A user creates the file record and uploads its first content.
      const asset = await create(t.api, 'assets', { asset_no: uniqueName('S') });
      const created = expectOk<Inserted>(await client.put('/3.0/files', { asset_id: asset }, { headers: asUser }), 201);
      const id = created.ids[0]!;
      const token = String((await one(t.api, 'files', id)).upload_endpoint).split('/').pop()!;
      expectError(await upload(client, token, PDF, asReadonly), 403, 'Access denied: POST on upload requires user');
      expectOk(await upload(client, token, PDF, asUser));
      expectError(await upload(client, token, PNG, asUser), 403, 'Access denied: POST on upload requires admin');
      assert.equal((await one(t.api, 'files', id)).mimetype, 'application/pdf');
      expectOk(await upload(client, token, PNG, asAdmin));
      assert.equal((await one(t.api, 'files', id)).mimetype, 'image/png');
      const down = await getRaw(t.svc.port, cert, `/3.0/upload/${token}`, asReadonly);
      assert.equal(down.status, 200);
      assert.ok(down.raw.equals(PNG));
      // The upload is audited with the session user.
      const audit = await list(t.api, `auditlog/endpoint=files/record_id=${id}/action=update`);
      assert.deepEqual(audit.map((e) => e.user_id), [plain.id, admin.id]);
    });

    it('the published PHP client round trip, exactly as it goes over the wire', async () => {
      const php = { 'user-agent': 'TRPAPI-PHP/1.0', 'content-type': 'application/x-www-form-urlencoded', expect: '' };
      const asset = await create(t.api, 'assets', { asset_no: uniqueName('PHP') });
      // createFiles($data): PUT with a JSON body labelled as a form.
      const put = await t.api.request('PUT', '/3.0/files', { headers: php, body: JSON.stringify({ asset_id: asset, description: 'from PHP' }) });
      const id: number = expectOk<Inserted>(put, 201).ids[0]!;
      // getFilesbyId($id)
      const [file] = expectOk<FileRecord[]>(await t.api.request('GET', `/3.0/files/files.id=${id}`, { headers: { 'user-agent': php['user-agent'], expect: '' } }));
      assert.equal(file!.id, id);
      const endpoint = new URL(file!.upload_endpoint);
      assert.equal(endpoint.origin, new URL(t.svc.baseUrl).origin);
      // uploadFile($uuid, $bytes): raw POST of the bytes, form Content-Type, empty Expect.
      const res = await t.api.request('POST', endpoint.pathname, { headers: php, body: JPEG });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.envelope.response, { records_updated: 1, records_found: 1 });
      assert.equal(res.envelope.request.endpoint, 'upload');
      const [after] = expectOk<FileRecord[]>(await t.api.request('GET', `/3.0/files/files.id=${id}`, { headers: { 'user-agent': php['user-agent'] } }));
      assert.deepEqual([after!.mimetype, after!.size, after!.filename, after!.description], ['image/jpeg', JPEG.length,
        `${endpoint.pathname.split('/').pop()}.jpg`, 'from PHP']);
      assert.match(after!.upload_uuid, /^[0-9a-f]{64}$/);
      const down = await getRaw(t.svc.port, t.cert, endpoint.pathname, { 'user-agent': php['user-agent'] });
      assert.ok(down.raw.equals(JPEG), 'byte for byte');
      // And through curl's habit of omitting an empty Expect: header entirely.
      const again = await t.api.request('POST', endpoint.pathname, { headers: { 'user-agent': php['user-agent'],
        'content-type': php['content-type'] }, body: JPEG });
      assert.deepEqual(again.envelope.response, { records_updated: 1, records_found: 1 });
    });
  });

  describe(`upload size limits (${kind})`, () => {
    let small: Tenant;
    let big: Tenant;
    let standard: Tenant;
    before(async () => {
      small = await tenant(kind, { uploadMaxBytes: 1000 });
      big = await tenant(kind, { uploadMaxBytes: 26 * MiB });
      standard = await tenant(kind);
    });
    after(async () => { await close(small); await close(big); await close(standard); });

    it('over the limit → 413 with Content-Length and with chunked transfer; nothing stored; at the limit is fine', async () => {
      const { id, token } = await newFile(small.api);
      const over = Buffer.concat([PDF, Buffer.alloc(1001 - PDF.length, 0x20)]);
      const exact = over.subarray(0, 1000);
      expectError(await upload(small.api, token, over), 413, 'Request body exceeds 1000 bytes');
      const chunked = await streamRequest(small.svc.port, small.cert, 'POST', `/3.0/upload/${token}`, {},
        [over.subarray(0, 300), over.subarray(300, 700), over.subarray(700)]);
      assert.equal(chunked.status, 413, chunked.text);
      assert.equal(chunked.errorReply.error, 'Request body exceeds 1000 bytes');
      assert.deepEqual(storeContents(small.root), { blobs: [], partial: [] });
      assert.equal((await one(small.api, 'files', id)).upload_uuid, null);
      const ok = await streamRequest(small.svc.port, small.cert, 'POST', `/3.0/upload/${token}`, {}, [exact.subarray(0, 10), exact.subarray(10)]);
      assert.equal(ok.status, 200, ok.text);
      assert.equal((await one(small.api, 'files', id)).size, 1000);
    });

    it('streams a 25 MiB upload to storage without holding it in memory, and serves it back intact', async () => {
      const { id, token } = await newFile(big.api);
      const total = 25 * MiB;
      const hash = createHash('sha256');
      for (const chunk of bytes(PDF, total)) hash.update(chunk);
      const baseline = await settledMemory();
      const sampler = memorySampler();
      const res = await streamRequest(big.svc.port, big.cert, 'POST', `/3.0/upload/${token}`, { 'content-type': 'application/pdf' }, bytes(PDF, total));
      const peak = sampler.stop();
      assert.equal(res.status, 200, res.text);
      report(kind, '25 MiB upload', baseline, peak);
      assertHeldLittle(baseline, peak);
      const file = await one(big.api, 'files', id);
      assert.deepEqual([file.size, file.mimetype, file.upload_uuid], [total, 'application/pdf', hash.digest('hex')]);
      const down = await getRaw(big.svc.port, big.cert, `/3.0/upload/${token}`);
      assert.equal(down.raw.length, total);
      assert.equal(sha256(down.raw), file.upload_uuid);
    });

    it('the default limit is 25 MiB: a larger body is refused without being buffered, chunked or with Content-Length', async () => {
      const { id, token } = await newFile(standard.api);
      const total = 30 * MiB;
      const baseline = await settledMemory();
      const sampler = memorySampler();
      const chunked = await streamRequest(standard.svc.port, standard.cert, 'POST', `/3.0/upload/${token}`, {}, bytes(PDF, total));
      const peak = sampler.stop();
      assert.equal(chunked.status, 413, chunked.text);
      assert.equal(chunked.errorReply.error, `Request body exceeds ${25 * MiB} bytes`);
      report(kind, '30 MiB chunked body over the limit', baseline, peak);
      assertHeldLittle(baseline, peak);
      const declared = await streamRequest(standard.svc.port, standard.cert, 'POST', `/3.0/upload/${token}`, { 'content-length': String(total) },
        bytes(PDF, total));
      assert.equal(declared.status, 413, declared.text);
      assert.equal(declared.errorReply.error, `Request body exceeds ${25 * MiB} bytes`);
      assert.ok(declared.sentBeforeResponse < 8 * MiB, `answered after ${declared.sentBeforeResponse} bytes`);
      assert.deepEqual(storeContents(standard.root), { blobs: [], partial: [] });
      assert.equal((await one(standard.api, 'files', id)).upload_uuid, null);
      // The service still answers on a new connection.
      expectOk(await upload(standard.api, token, GIF));
    });
  });
}
