// Baseline "bare W9": GET /3.0/assetchecks/asset_id=N with bare Fastify and prepared
// statements (bare-driver.ts) over the same transport as the service. Per request:
// the client certificate's company (as bare W2), then the asset's checks in scope
// counted, the first page of them joined with their asset and certificate file, and
// the page's standards from their link rows (those in scope) in one statement; the
// records written by hand in the service's member order (bare-json.ts), stored JSON
// (points, standard_ids, data) inserted as it is. Env: PORT, TLS_CERT_FILE,
// TLS_KEY_FILE, DATABASE_URL (postgres://…) or SQLITE_FILE, PAGE_SIZE, BASE_URL.
import type { TLSSocket } from 'node:tls';
import { bareFastify, baseUrl, fingerprintOf, JSON_TYPE, NO_ACCESS, serve } from './bare-fastify.ts';
import { type BareRow, clientCompanyOf, openPrepared } from './bare-driver.ts';
import { listBody, members, objectJson } from './bare-json.ts';
import { FILE_COLUMNS, inScope } from './bare-sql.ts';

const PAGE_SIZE = Number(process.env.PAGE_SIZE ?? 30);
const BASE_URL = baseUrl();
const BY_ASSET = /^\/3\.0\/assetchecks\/asset_id=(\d+)$/;

const CHECK_COLUMNS = ['id', 'company_id', 'asset_id', 'check_type', 'check_date', 'performed_by', 'certificate_no', 'result', 'points',
  'standard_ids', 'file_id', 'next_check', 'data', 'created', 'modified'];
/** An asset embedded in a check: its short form. */
const ASSET_SHORT = ['id', 'asset_no', 'serial_no', 'status', 'next_check', 'period', 'company_id', 'location_id', 'department_id', 'description', 'data'];

const db = openPrepared(process.env.DATABASE_URL, process.env.SQLITE_FILE ?? '');
const clientCompany = clientCompanyOf(db);
const columns = (alias: string, list: readonly string[]) => list.map((c) => `${alias}.${c === 'upload_endpoint' ? 'token' : c}`).join(', ');
const mine = (alias: string) => `${alias}.asset_id = :asset AND ${inScope(db.engine, alias)}`;
const count = db.statement('bare_checks_count', `SELECT COUNT(*) FROM assetchecks c WHERE ${mine('c')}`);
const page = db.statement('bare_checks_page', `SELECT ${columns('c', CHECK_COLUMNS)}, ${columns('a', ASSET_SHORT)}, ${columns('f', FILE_COLUMNS)}, c.version
  FROM assetchecks c JOIN assets a ON a.id = c.asset_id LEFT JOIN files f ON f.id = c.file_id
  WHERE ${mine('c')} ORDER BY c.id LIMIT ${PAGE_SIZE}`);
const ids = db.engine === 'sqlite' ? 'SELECT value FROM json_each(:ids)' : 'SELECT CAST(value AS bigint) FROM json_array_elements_text(CAST(:ids AS json))';
const standards = db.statement('bare_checks_standards', `SELECT l.check_id, ${columns('s', ASSET_SHORT)} FROM assetcheck_standards l
  LEFT JOIN assets s ON s.id = l.asset_id AND ${inScope(db.engine, 's')} WHERE l.check_id IN (${ids}) ORDER BY l.check_id, l.position`);

const CHECK = members(CHECK_COLUMNS, new Set(['points', 'standard_ids', 'data']));
const ASSET = members(ASSET_SHORT);
const FILE = members(FILE_COLUMNS);
const ASSET_AT = CHECK.length;
const FILE_AT = ASSET_AT + ASSET.length;
const ENDPOINT_AT = FILE_AT + FILE_COLUMNS.indexOf('upload_endpoint');
const VERSION_AT = FILE_AT + FILE.length;
const NULLS = `{${ASSET.map((m) => `${m.key}null`).join(',')}}`;

/** Check id → its standards as JSON text, in their order; one the caller may not see with every member null. */
function standardsByCheck(rows: readonly BareRow[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const r of rows) {
    const list = out.get(Number(r[0])) ?? [];
    list.push(r[1] === null ? NULLS : objectJson(r, 1, ASSET));
    out.set(Number(r[0]), list);
  }
  return out;
}

function checkJson(r: BareRow, linked: ReadonlyMap<number, readonly string[]>): string {
  const file = r[FILE_AT] === null ? 'null' : objectJson(r.map((v, i) => (i === ENDPOINT_AT ? `${BASE_URL}/3.0/upload/${String(v)}` : v)), FILE_AT, FILE);
  return `${objectJson(r, 0, CHECK).slice(0, -1)},"asset":${objectJson(r, ASSET_AT, ASSET)},"file":${file},`
    + `"standards":[${(linked.get(Number(r[0])) ?? []).join(',')}],"version":${String(r[VERSION_AT])}}`;
}

const fastify = bareFastify();
fastify.get('/3.0/assetchecks/*', async (req, reply) => {
  const url = req.raw.url ?? '';
  const fingerprint = fingerprintOf(req.raw.socket as TLSSocket);
  const root = fingerprint === null ? null : await clientCompany(fingerprint);
  if (root === null) return reply.code(401).type(JSON_TYPE).send(NO_ACCESS);
  const m = BY_ASSET.exec(url);
  if (!m) return reply.code(404).type(JSON_TYPE).send('{"response":{"error":"only asset_id=N","code":"not_found"}}');
  const asset = Number(m[1]);
  const total = Number((await count({ asset, root }))[0]![0]);
  const rows = await page({ asset, root });
  const linked = standardsByCheck(rows.length === 0 ? [] : await standards({ ids: JSON.stringify(rows.map((r) => Number(r[0]))), root }));
  return reply.type(JSON_TYPE).send(listBody(url, 'assetchecks', total, PAGE_SIZE, rows.map((r) => checkJson(r, linked))));
});
await serve(fastify, () => db.close());
