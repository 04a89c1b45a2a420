// Baseline "bare W2": GET /3.0/assets/next_check<DATE with bare Fastify and the
// bare driver over the same transport as the service. Per request: the client
// certificate's SPKI fingerprint (worked out once per TLS connection) → its
// company, then the count and the first page with prepared statements, and the
// envelope written by hand. Env: PORT, TLS_CERT_FILE, TLS_KEY_FILE, DATABASE_URL
// (postgres://…) or SQLITE_FILE, PAGE_SIZE, BASE_URL.
import { createHash } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { bareFastify, serve } from './bare-fastify.ts';
import { openBareDriver } from './bare-driver.ts';
import { assetJson, filesByAsset, listBody } from './bare-json.ts';

const PAGE_SIZE = Number(process.env.PAGE_SIZE ?? 30);
const BASE_URL = process.env.BASE_URL ?? '';
const OVERDUE = /^\/3\.0\/assets\/next_check<(\d{4}-\d{2}-\d{2})$/;
const JSON_TYPE = 'application/json; charset=utf-8';

const driver = openBareDriver(process.env.DATABASE_URL, process.env.SQLITE_FILE ?? '');

const fingerprints = new WeakMap<TLSSocket, string | null>();
/** SHA-256 of the peer certificate's DER SubjectPublicKeyInfo, lower-case hex; null without a certificate. */
function fingerprintOf(socket: TLSSocket): string | null {
  let known = fingerprints.get(socket);
  if (known === undefined) {
    const cert = socket.getPeerX509Certificate();
    known = cert ? createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('hex') : null;
    fingerprints.set(socket, known);
  }
  return known;
}

const fastify = bareFastify();
fastify.get('/3.0/assets/*', async (req, reply) => {
  const url = req.raw.url ?? '';
  const fingerprint = fingerprintOf(req.raw.socket as TLSSocket);
  const company = fingerprint === null ? null : await driver.clientCompany(fingerprint);
  if (company === null) return reply.code(401).type(JSON_TYPE).send('{"response":{"error":"no access","code":"no_access"}}');
  const m = OVERDUE.exec(url);
  if (!m) return reply.code(404).type(JSON_TYPE).send('{"response":{"error":"only next_check<DATE","code":"not_found"}}');
  const before = m[1]!;
  const total = await driver.count(company, before);
  const rows = await driver.page(company, before);
  const files = filesByAsset(rows.length === 0 ? [] : await driver.files(rows.map((r) => Number(r[0]))), BASE_URL);
  return reply.type(JSON_TYPE).send(listBody(url, total, PAGE_SIZE, rows.map((r) => assetJson(r, files))));
});
await serve(fastify, () => driver.close());
