// Error responses and the response headers of the OpenAPI document.
// Each operation lists the errors it can answer with; those that read the same
// everywhere are shared components.
import type { ErrorCode } from '../errors.ts';
import { ref, type Schema } from './openapi-schemas.ts';

/** What each error says; XXXX, YYYY and N stand for the values filled in. */
const MESSAGES: Partial<Record<ErrorCode, string>> = {
  invalid_filter: 'Invalid filter definition: XXXX',
  filter_required: 'No fields specified for record updating (deletion). This would update (delete) ALL XXXX records for your company. Request aborted.',
  invalid_field: 'Field verification failed, invalid field XXXX',
  invalid_value: 'Field verification failed, invalid value for XXXX',
  malformed_json: 'Malformed JSON body: XXXX',
  malformed_order: 'Malformed result ordering value: XXXX',
  no_access: 'You do not have access to the API. Your signature: XXXX',
  bad_session: 'Bad session token.',
  bad_login: 'Invalid username or password',
  forbidden: 'Access denied: XXXX on YYYY requires ZZZZ (or another refusal starting with "Access denied" or "Impersonation")',
  no_endpoint: 'Endpoint XXXX does not exist',
  no_version: 'API version XXXX is not supported',
  not_found: 'Upload XXXX does not exist',
  method_not_allowed: 'Method XXXX not supported on endpoint YYYY',
  data_error: 'Data Error: XXXX (a reference that blocks a delete, a duplicate unique value, an illegal state change)',
  no_session: 'No session to log out',
  too_many: 'Too many records in one request: N (at most M)',
  too_large: 'Request body exceeds N bytes',
  too_long: 'Request line too long / Request headers too large',
  bad_file_type: 'Invalid file type for upload. The only supported file types are PDF, PNG, GIF and JPG',
  rate_limited: 'Rate limit exceeded, retry in N seconds (or, for login, the delay after a failed authentication)',
  internal: 'Internal error, reference XXXX (a request id found in the log)',
  storage: 'Storage exception: XXXX (file storage failed; retry later)',
  cursor_expired: 'Cursor XXXX is older than the retained changes; resynchronise',
  invalid_rows: 'Invalid rows in CSV: N (with `errors`: each refused row, its field and why)',
  precondition_failed: 'Record changed since version XXXX (the If-Match value sent)',
  idempotency_mismatch: 'Idempotency-Key XXXX was used for another request',
  idempotency_in_flight: 'A request with Idempotency-Key XXXX is still running',
  not_acceptable: 'No format in Accept: XXXX can be answered; this list answers YYYY (Accept names only formats this list does not make, or refuses JSON)',
};

const integerHeader = (description: string): Schema => ({ description, schema: { type: 'integer', minimum: 0 } });
const textHeader = (description: string): Schema => ({ description, schema: { type: 'string' } });

/** Sent on every /3.0 answer while the service limits requests per certificate. */
const RATE_LIMIT_HEADERS: Record<string, Schema> = {
  'X-RateLimit-Limit': integerHeader('Requests the certificate may send at once (the burst).'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the burst now.'),
  'X-RateLimit-Reset': integerHeader('Seconds until the burst is whole again.'),
  'RateLimit-Policy': textHeader('The policy as the IETF RateLimit header draft writes it: `"default";q=<burst>;w=<seconds>`.'),
  RateLimit: textHeader('The state as the IETF RateLimit header draft writes it: `"default";r=<remaining>;t=<seconds>`.'),
};

export const HEADER_COMPONENTS: Record<string, Schema> = {
  ...RATE_LIMIT_HEADERS,
  // Not on a CSV answer, which has neither member.
  ETag: textHeader('`W/"<hash>"`: a hash of the answer\'s `response` and `pagination` members; on every JSON answer.'),
  'Idempotent-Replayed': { description: '`true` on a reply given again for a repeated Idempotency-Key.',
    schema: { const: 'true' } },
  // Only on 429, which always sends it.
  'Retry-After': { ...integerHeader('Seconds to wait before trying again.'), required: true },
};

export const headerRef = (name: string): Schema => ({ $ref: `#/components/headers/${name}` });

/** The rate-limit headers, present on every answer of a /3.0 operation when the limit is on. */
export const rateLimitHeaders = (): Schema => Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((h) => [h, headerRef(h)]));

/** Errors that read the same in every operation that can answer them: one shared response each. */
const SHARED: Readonly<Record<number, readonly [string, ErrorCode]>> = {
  403: ['Forbidden', 'forbidden'],
  404: ['UploadNotFound', 'not_found'],
  406: ['NotAcceptable', 'not_acceptable'],
  409: ['Conflict', 'data_error'],
  413: ['BodyTooLarge', 'too_large'],
  414: ['RequestLineTooLong', 'too_long'],
  415: ['UnsupportedFileType', 'bad_file_type'],
  429: ['RateLimited', 'rate_limited'],
  431: ['HeadersTooLarge', 'too_long'],
  500: ['InternalError', 'internal'],
  503: ['StorageError', 'storage'],
};

/** The error body narrowed to the codes the response can carry. */
const errorSchema = (codes: readonly ErrorCode[]): Schema =>
  ({ allOf: [ref('Error'), { type: 'object', properties: { response: { type: 'object', properties: { code: { enum: [...codes] } } } } }] });

const line = (code: ErrorCode) => `\`${code}\`: ${MESSAGES[code] ?? code}`;

function errorResponse(status: number, codes: readonly ErrorCode[]): Schema {
  const headers = status === 429 ? { ...rateLimitHeaders(), 'Retry-After': headerRef('Retry-After') } : rateLimitHeaders();
  return {
    description: codes.length === 1 ? line(codes[0]!) : codes.map((c) => `- ${line(c)}`).join('\n'),
    headers,
    content: { 'application/json': { schema: errorSchema(codes) } },
  };
}

/** Error responses of operations, sharing the fixed ones as components. */
export class ErrorResponses {
  readonly components: Record<string, Schema> = {};

  /** status → codes, to the `responses` entries of an operation. */
  responses(errors: Readonly<Record<number, readonly ErrorCode[]>>): Record<string, Schema> {
    const out: Record<string, Schema> = {};
    for (const [key, codes] of Object.entries(errors)) {
      const status = Number(key);
      const shared = SHARED[status];
      if (shared && codes.length === 1 && codes[0] === shared[1]) {
        this.components[shared[0]] ??= errorResponse(status, codes);
        out[key] = { $ref: `#/components/responses/${shared[0]}` };
      } else {
        out[key] = errorResponse(status, codes);
      }
    }
    return out;
  }
}
