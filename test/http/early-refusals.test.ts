// Early refusals reach a client that is still sending (src/http/early-answer.ts):
// a body over BODY_MAX_BYTES or UPLOAD_MAX_BYTES (413), or a request line or header
// block the parser refuses (414/431), is answered while the client keeps writing
// as fast as the socket takes its bytes and reads nothing until it has written
// everything (or the server has stopped reading). Closing at once would make the
// kernel answer the unread bytes with a reset, which destroys the answer before
// the client reads it; every request here must read its complete answer instead.
// On the HTTPS listener (real TLS) and the trusted-proxy one (plain TCP), with
// Content-Length and chunked, without and with `Expect: 100-continue` (waiting
// for it, and not), HTTP/1.1 keep-alive as far as the client is concerned.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { BlobStore } from '../../src/storage/blobs.ts';
import type { TestCert } from '../support/certs.ts';
import { type Answer, type BodyRequest, type ExpectMode, type Framing, type Outcome, parseAnswers, send, sendBody, type Transport } from '../support/early-wire.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { closePlain, escapedPem, listenPlain } from '../support/proxy.ts';
import { count } from '../support/workflows.ts';
import { create, one } from './resources-support.ts';
import type { Envelope, ErrorReply } from '../support/api.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const BODY_MAX = MiB; // the default BODY_MAX_BYTES
const UPLOAD_MAX = 256 * KiB;
const HEADER = 'X-SSL-Client-Cert';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\n');
const JSON_HEAD = Buffer.from('{"description":"');
const MAIN_REPETITIONS = 50;

const describeOutcome = (o: Outcome) => (o.kind === 'response'
  ? `${o.answer.status} (after ${o.interim.join(',') || 'no interim answer'}): ${o.answer.text.slice(0, 200)}`
  : `${o.kind} ${o.error} after ${o.written} body bytes written; received: ${JSON.stringify(o.received)}`);

/** The complete answer, or a failure that says what happened instead. */
function answered(o: Outcome, what: string): Answer & { interim: readonly number[]; written: number; stalled: boolean } {
  if (o.kind !== 'response') assert.fail(`${what}: no answer — ${describeOutcome(o)}`);
  return { ...o.answer, interim: o.interim, written: o.written, stalled: o.stalled };
}

/** Past LINGER_BYTES dropped the server stops reading: a 30 MiB body is never taken whole. */
function assertStoppedReading(a: { written: number; stalled: boolean }, size: number, what: string): void {
  if (size <= 16 * MiB) return;
  assert.ok(a.stalled && a.written < size, `${what}: the server took ${a.written} of ${size} bytes without stopping`);
}

/** The 413 with its usual envelope, `Connection: close`. */
function assertTooLarge(a: Answer, max: number, method: string, what: string): void {
  assert.equal(a.status, 413, `${what}: ${a.status} ${a.text}`);
  assert.equal(a.headers.get('connection'), 'close', what);
  const body = JSON.parse(a.text) as Envelope;
  assert.deepEqual(body.response, { error: `Request body exceeds ${max} bytes`, code: 'too_large' }, what);
  assert.equal(body.request.request_method, method, what);
}

/**
 * The interim answers a refusal may come after: none when Content-Length already says
 * too much; with chunked the size shows only while reading, so a client that
 * expects 100-continue gets it first.
 */
const expectedInterim = (framing: Framing, expect: ExpectMode): number[] => (framing === 'chunked' && expect !== 'none' ? [100] : []);

/** Connections `server` still holds, waiting up to `ms` for them to reach `target`. */
async function connectionsSettle(server: http.Server, target: number, ms: number): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const n = await new Promise<number>((r) => server.getConnections((_e, c) => r(c)));
    if (n <= target || Date.now() > until) return n;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const MATRIX: readonly { size: number; framing: Framing; expect: ExpectMode; times: number }[] = [2 * MiB, 30 * MiB].flatMap((size) =>
  (['length', 'chunked'] as const).flatMap((framing) => (['none', 'wait', 'eager'] as const).map((expect) => ({
    size, framing, expect, times: size > 8 * MiB ? 1 : 3,
  }))));

const name = (c: { size: number; framing: Framing; expect: ExpectMode }) =>
  `${c.size / MiB} MiB, ${c.framing === 'length' ? 'Content-Length' : 'chunked'}, ${c.expect === 'none' ? 'no Expect' : `Expect: 100-continue (${c.expect === 'wait' ? 'waiting for it' : 'not waiting'})`}`;

for (const kind of DB_KINDS) {
  describe(`early refusals reach a client still sending (${kind})`, () => {
    let svc: Service;
    let root: string;
    let cert: TestCert;
    let tlsT: Transport;
    let plainT: Transport;
    let proxied: Record<string, string>;
    let token: string;
    let fileId: number;

    before(async () => {
      root = mkdtempSync(join(tmpdir(), 'asset-tracker-early-'));
      svc = await startService(kind, { blobs: new BlobStore(root), uploadMaxBytes: UPLOAD_MAX, proxy: { trusted: ['127.0.0.1'], header: HEADER } });
      const company = await svc.company('Early refusals');
      const registered = await svc.certificate(company);
      cert = registered.cert;
      tlsT = { port: svc.port, cert };
      plainT = { port: await listenPlain(svc.app), cert: null };
      proxied = { [HEADER]: escapedPem(cert.certPem) };
      const asset = await create(registered.client, 'assets', { asset_no: 'EARLY-1' });
      fileId = await create(registered.client, 'files', { asset_id: asset, description: 'too large' });
      token = String((await one(registered.client, 'files', fileId)).upload_endpoint).split('/').pop()!;
    });
    after(async () => {
      await closePlain(svc.app);
      await svc.close();
      rmSync(root, { recursive: true, force: true });
    });

    const json = (c: Omit<BodyRequest, 'method' | 'path' | 'head'>): BodyRequest => ({ method: 'PUT', path: '/3.0/locations', head: JSON_HEAD, ...c });
    const upload = (c: Omit<BodyRequest, 'method' | 'path' | 'head'>): BodyRequest => ({ method: 'POST', path: `/3.0/upload/${token}`, head: PDF, ...c });

    it(`a 2 MiB JSON body with Content-Length over TLS, ${MAIN_REPETITIONS} times: the 413 every time, and the connections close`, async () => {
      const before = await connectionsSettle(svc.app.https, 0, 0); // the harness client's idle keep-alive connection
      const failures: string[] = [];
      for (let i = 0; i < MAIN_REPETITIONS; i++) {
        const o = await sendBody(tlsT, json({ size: 2 * MiB, framing: 'length', expect: 'none' }));
        if (o.kind !== 'response') failures.push(describeOutcome(o));
        else assertTooLarge(o.answer, BODY_MAX, 'Put', `attempt ${i + 1}`);
      }
      assert.deepEqual(failures, [], `${failures.length} of ${MAIN_REPETITIONS} attempts got no answer`);
      // Each client closes once it has read the answer; the server then closes its side at once.
      assert.equal(await connectionsSettle(svc.app.https, before, 2000), before, 'connections left open after the clients closed');
    });

    for (const c of MATRIX) {
      it(`JSON body over BODY_MAX_BYTES over TLS: ${name(c)} → 413`, async () => {
        for (let i = 0; i < c.times; i++) {
          const a = answered(await sendBody(tlsT, json(c)), name(c));
          assertTooLarge(a, BODY_MAX, 'Put', name(c));
          assert.deepEqual(a.interim, expectedInterim(c.framing, c.expect), `${name(c)}: interim answers`);
          // Waiting for 100-continue, a body declared too large is never sent.
          if (c.expect === 'wait' && c.framing === 'length') assert.equal(a.written, 0);
          else assertStoppedReading(a, c.size, name(c));
        }
      });
    }

    for (const c of MATRIX) {
      it(`upload over UPLOAD_MAX_BYTES over TLS: ${name(c)} → 413, nothing stored`, async () => {
        for (let i = 0; i < c.times; i++) {
          const a = answered(await sendBody(tlsT, upload(c)), name(c));
          assertTooLarge(a, UPLOAD_MAX, 'Post', name(c));
          assert.deepEqual(a.interim, expectedInterim(c.framing, c.expect), `${name(c)}: interim answers`);
        }
        assert.equal((await one(svc.client(cert), 'files', fileId)).upload_uuid, null);
      });
    }

    it('a refused upload type (415) on a 2 MiB chunked body is answered too', async () => {
      const a = answered(await sendBody(tlsT, { method: 'POST', path: `/3.0/upload/${token}`, head: Buffer.from('not a document'),
        size: 2 * MiB, framing: 'chunked', expect: 'none' }), 'text upload');
      assert.equal(a.status, 415, a.text);
      assert.equal((JSON.parse(a.text) as Envelope<ErrorReply>).response.code, 'bad_file_type');
    });

    it('the plain listener for the proxy answers alike: JSON and upload bodies, both framings, with and without Expect', async () => {
      const cases = [
        ...(['length', 'chunked'] as const).flatMap((framing) => (['none', 'wait', 'eager'] as const).map((expect) => ({ size: 2 * MiB, framing, expect }))),
        { size: 30 * MiB, framing: 'length' as const, expect: 'none' as const },
        { size: 30 * MiB, framing: 'chunked' as const, expect: 'eager' as const },
      ];
      for (const c of cases) {
        for (let i = 0; i < (c.size > 8 * MiB ? 1 : 5); i++) {
          const a = answered(await sendBody(plainT, json({ ...c, headers: proxied })), `plain, ${name(c)}`);
          assertTooLarge(a, BODY_MAX, 'Put', `plain, ${name(c)}`);
          assert.deepEqual(a.interim, expectedInterim(c.framing, c.expect), `plain, ${name(c)}: interim answers`);
        }
        const u = answered(await sendBody(plainT, upload({ ...c, headers: proxied })), `plain upload, ${name(c)}`);
        assertTooLarge(u, UPLOAD_MAX, 'Post', `plain upload, ${name(c)}`);
      }
    });

    it('a refusal that keeps the connection (404 on a 2 MiB body) drains the body and serves the next request', async () => {
      const socket = tls.connect({ host: '127.0.0.1', port: svc.port, rejectUnauthorized: false, servername: 'localhost', cert: cert.certPem, key: cert.keyPem });
      const received: Buffer[] = [];
      socket.on('data', (d: Buffer) => received.push(d));
      await new Promise<void>((r, j) => { socket.once('secureConnect', r); socket.once('error', j); });
      socket.write(`PUT /3.0/nosuchendpoint HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${2 * MiB}\r\n\r\n`);
      socket.write(Buffer.alloc(2 * MiB, 0x20));
      socket.write('GET /3.0/endpoints HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      await new Promise<void>((r) => socket.once('close', () => r()));
      const all = Buffer.concat(received);
      const first = parseAnswers(all).final;
      assert.equal(first?.status, 404, all.toString('latin1').slice(0, 300));
      assert.notEqual(first?.headers.get('connection'), 'close');
      const split = all.indexOf('HTTP/1.1 200');
      assert.ok(split > 0, 'no answer to the second request');
      assert.equal(parseAnswers(all.subarray(split)).final?.status, 200);
    });

    // Node's parser refuses a request line or header block over 16 KiB; the client goes on writing a megabyte of it.
    const overlong = (what: 'line' | 'headers'): Buffer[] => {
      const start = what === 'line' ? 'GET /3.0/assets/description=' : 'GET /3.0/assets HTTP/1.1\r\nHost: localhost\r\nX-Padding: ';
      const end = what === 'line' ? ' HTTP/1.1\r\nHost: localhost\r\n\r\n' : '\r\n\r\n';
      const pieces = [Buffer.from(start)];
      for (let i = 0; i < 16; i++) pieces.push(Buffer.alloc(64 * KiB, 0x61));
      pieces.push(Buffer.from(end));
      return pieces;
    };

    for (const [label, t] of [['TLS', () => tlsT], ['plain', () => plainT]] as const) {
      it(`a 1 MiB request line or header block (${label}) → 414/431 as JSON, not a reset`, async () => {
        for (let i = 0; i < 5; i++) {
          for (const what of ['line', 'headers'] as const) {
            const a = answered(await send(t(), '', overlong(what), false), `${label}, request ${what}`);
            // Which of the two shows depends on the bytes the parser refused, as they arrived
            // (docs/api.md, Decisions and limits); either is the parser's JSON refusal.
            const expected = { 414: 'Request line too long', 431: 'Request headers too large' }[a.status];
            assert.ok(expected, `${label}, request ${what}: ${a.status} ${a.text}`);
            assert.deepEqual(JSON.parse(a.text), { response: { error: expected, code: 'too_long' } });
          }
        }
      });
    }

    it('nothing was written, and the service still answers', async () => {
      assert.equal(await count(svc, sql`SELECT COUNT(*) AS n FROM locations`), 0);
      const ok = await svc.client(cert).get('/3.0/endpoints');
      assert.equal(ok.status, 200, ok.text);
    });
  });
}
