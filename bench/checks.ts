// What every response body of a workload must be; the load generators check each one.
import { type CheckPage, checkPageProblem } from './checks-page.ts';
import { STATIC_BODY } from './payload.ts';

export type Check =
  | { readonly kind: 'static' }
  | {
    /** A page of assets: `page` of `totalRecords` matches, each in `scope` (and with next_check < `before`, or the id `id`). */
    readonly kind: 'assets'; readonly totalRecords: number; readonly pageSize: number; readonly page: number;
    readonly scope: readonly number[]; readonly before?: string; readonly id?: number;
  }
  | { readonly kind: 'updated'; readonly records: number }
  /** A PUT's answer: `records` new records and as many distinct ids, ascending. */
  | { readonly kind: 'inserted'; readonly records: number }
  /** The first page of an asset's checks (checks-page.ts). */
  | CheckPage;

/** Member order of the envelope, of an asset and of its embeds, as the service writes them. */
const REQUEST_KEYS = 'url,endpoint,requested_version,api_version,request_method,timestamp,session';
const ASSET_KEYS = 'id,company_id,asset_no,serial_no,description,status,next_check,last_check,last_result,period,location_id,department_id,'
  + 'external_type_id,date_added,data,modified,company,location,department,externaltype,files,version';
const COMPANY_KEYS = 'id,name,created,logo,subdomain,styles,data,parent_id,modified,version';
const PLACE_KEYS = 'id,company_id,description,creationdate,data,modified,version';
const TYPE_KEYS = 'id,external_itemtype_id,company_id,description,data,modified,version';

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const keysOf = (v: unknown): string => (isObject(v) ? Object.keys(v).join(',') : String(v));

/** Why the request block is not that of `method` on `path` (its endpoint: /3.0/<endpoint>/…), or null. */
export function requestProblem(body: Json, path: string, method: string): string | null {
  const r = body.request;
  if (!isObject(r) || keysOf(r) !== REQUEST_KEYS) return `request members ${keysOf(r)}`;
  if (r.url !== path || r.endpoint !== path.split('/')[2] || r.requested_version !== '3.0' || r.api_version !== 3
    || r.request_method !== method || typeof r.timestamp !== 'number' || r.session !== null) return 'request block';
  return null;
}

/** Why an asset record is not shaped like the service's, or null. */
function shapeProblem(a: Json): string | null {
  if (keysOf(a) !== ASSET_KEYS) return `asset members ${keysOf(a)}`;
  if (keysOf(a.company) !== COMPANY_KEYS || a.company_id !== (a.company as Json).id) return 'company embed';
  for (const [key, via] of [['location', 'location_id'], ['department', 'department_id']] as const) {
    if (a[via] === null ? a[key] !== null : keysOf(a[key]) !== PLACE_KEYS || (a[key] as Json).id !== a[via]) return `${key} embed`;
  }
  const type = a.externaltype;
  if (keysOf(type) !== TYPE_KEYS || (type as Json).id !== a.external_type_id) return 'externaltype embed';
  if (!Array.isArray(a.files)) return 'files';
  return null;
}

/** Why the pagination block or the page's length and order is not that of page `page` of `total` records, or null. */
export function paginationProblem(body: Json, total: number, pageSize: number, page: number): string | null {
  const p = body.pagination;
  if (!isObject(p) || keysOf(p) !== 'total_pages,total_records') return 'pagination members';
  if (p.total_records !== total) return `total_records ${String(p.total_records)} != ${total}`;
  if (p.total_pages !== Math.ceil(total / pageSize)) return 'total_pages';
  const list = body.response;
  if (!Array.isArray(list) || list.length !== Math.max(0, Math.min(pageSize, total - (page - 1) * pageSize))) return 'page length';
  let lastId = 0;
  for (const r of list as unknown[]) {
    if (!isObject(r)) return 'record';
    if (typeof r.id !== 'number' || r.id <= lastId) return 'order';
    lastId = r.id;
  }
  return null;
}

function pageProblem(body: Json, check: Extract<Check, { kind: 'assets' }>): string | null {
  const pagination = paginationProblem(body, check.totalRecords, check.pageSize, check.page);
  if (pagination) return pagination;
  for (const a of body.response as Json[]) {
    if (check.id !== undefined && a.id !== check.id) return `id ${String(a.id)} != ${check.id}`;
    if (!check.scope.includes(a.company_id as number)) return `company ${String(a.company_id)} outside the scope`;
    if (check.before !== undefined && (typeof a.next_check !== 'string' || a.next_check >= check.before)) return `next_check ${String(a.next_check)}`;
    const shape = shapeProblem(a);
    if (shape) return shape;
  }
  return null;
}

/** Why a body is not the expected one, or null when it is. */
export function problemOf(text: string, path: string, check: Check): string | null {
  if (check.kind === 'static') return text === STATIC_BODY ? null : 'not the static body';
  let body: unknown;
  try { body = JSON.parse(text); } catch { return 'not JSON'; }
  if (!isObject(body)) return 'not an object';
  if (check.kind === 'inserted') {
    if (keysOf(body) !== 'request,response') return `envelope members ${keysOf(body)}`;
    const r = body.response;
    if (!isObject(r) || keysOf(r) !== 'records_inserted,ids' || r.records_inserted !== check.records) return `records_inserted ${isObject(r) ? String(r.records_inserted) : String(r)} != ${check.records}`;
    const ids = r.ids;
    if (!Array.isArray(ids) || ids.length !== check.records) return `${Array.isArray(ids) ? ids.length : 'no'} ids for ${check.records} records`;
    for (let i = 0; i < ids.length; i++) {
      if (!Number.isInteger(ids[i]) || (i > 0 && (ids[i] as number) <= (ids[i - 1] as number))) return `ids not distinct ascending integers at ${i}`;
    }
    return requestProblem(body, path, 'Put');
  }
  if (check.kind === 'updated') {
    if (keysOf(body) !== 'request,response') return `envelope members ${keysOf(body)}`;
    const r = body.response;
    if (!isObject(r) || r.records_updated !== check.records || r.records_found !== check.records) return `counts ${JSON.stringify(r)} != ${check.records}`;
    return requestProblem(body, path, 'Post');
  }
  if (keysOf(body) !== 'request,pagination,response') return `envelope members ${keysOf(body)}`;
  return requestProblem(body, path, 'Get') ?? (check.kind === 'assetchecks' ? checkPageProblem(body, check) : pageProblem(body, check));
}
