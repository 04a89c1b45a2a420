// Baseline "bare W2": GET /3.0/assets/next_check<DATE with bare Fastify and the
// bare driver over the same transport as the service. Per request: the client
// certificate's SPKI fingerprint (worked out once per TLS connection) → its
// company, then the count and the first page with prepared statements, and the
// envelope written by hand. Env: PORT, TLS_CERT_FILE, TLS_KEY_FILE, DATABASE_URL
// (postgres://…) or SQLITE_FILE, PAGE_SIZE, BASE_URL.
import type { TLSSocket } from 'node:tls';
import { bareFastify, baseUrl, fingerprintOf, JSON_TYPE, NO_ACCESS, serve } from './bare-fastify.ts';
import { openBareDriver } from './bare-driver.ts';
import { assetJson, filesByAsset, listBody } from './bare-json.ts';

const PAGE_SIZE = Number(process.env.PAGE_SIZE ?? 30);
const BASE_URL = baseUrl();
const OVERDUE = /^\/3\.0\/assets\/next_check<(\d{4}-\d{2}-\d{2})$/;

const driver = openBareDriver(process.env.DATABASE_URL, process.env.SQLITE_FILE ?? '');

const fastify = bareFastify();
fastify.get('/3.0/assets/*', async (req, reply) => {
  const url = req.raw.url ?? '';
  const fingerprint = fingerprintOf(req.raw.socket as TLSSocket);
  const company = fingerprint === null ? null : await driver.clientCompany(fingerprint);
  if (company === null) return reply.code(401).type(JSON_TYPE).send(NO_ACCESS);
  const m = OVERDUE.exec(url);
  if (!m) return reply.code(404).type(JSON_TYPE).send('{"response":{"error":"only next_check<DATE","code":"not_found"}}');
  const before = m[1]!;
  const total = await driver.count(company, before);
  const rows = await driver.page(company, before);
  const files = filesByAsset(rows.length === 0 ? [] : await driver.files(rows.map((r) => Number(r[0]))), BASE_URL);
  return reply.type(JSON_TYPE).send(listBody(url, 'assets', total, PAGE_SIZE, rows.map((r) => assetJson(r, files))));
});
await serve(fastify, () => driver.close());
