// The response envelope, written as text member by member in the
// contract's order.
import { SESSION_MS } from '../auth/sessions.ts';
import type { ApiError } from '../errors.ts';
import type { SessionInfo } from '../model/principal.ts';
import type { Pagination } from '../engine/types.ts';

export interface RequestBlock {
  readonly url: string;
  readonly endpoint: string;
  readonly version: string;
  readonly method: string;
  /** Unix seconds. */
  readonly timestamp: number;
  readonly session: SessionInfo | null;
}

const capitalised = (method: string) => method.charAt(0) + method.slice(1).toLowerCase();

function sessionJson(s: SessionInfo | null, now: number): string {
  if (!s) return 'null';
  return `{"hash":${JSON.stringify(s.token)},"time":${now},"expiry":${now + SESSION_MS / 1000},"company_id":${s.companyId},"user_id":${s.userId}}`;
}

/** The major version of the API answering, whatever version was asked for. */
const API_VERSION = 3;

function requestJson(r: RequestBlock): string {
  return `{"url":${JSON.stringify(r.url)},"endpoint":${JSON.stringify(r.endpoint)},"requested_version":${JSON.stringify(r.version)},`
    + `"api_version":${API_VERSION},"request_method":${JSON.stringify(capitalised(r.method))},`
    + `"timestamp":${r.timestamp},"session":${sessionJson(r.session, r.timestamp)}}`;
}

export function successBody(r: RequestBlock, response: string, pagination?: Pagination): string {
  const page = pagination ? `,"pagination":{"total_pages":${pagination.total_pages},"total_records":${pagination.total_records}}` : '';
  return `{"request":${requestJson(r)}${page},"response":${response}}`;
}

export function errorBody(r: RequestBlock, e: ApiError): string {
  const extra = e.extra ? `,${e.extra}` : '';
  return `{"request":${requestJson(r)},"response":{"error":${JSON.stringify(e.message)},"code":${JSON.stringify(e.code)}${extra}}}`;
}
