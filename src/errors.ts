// Every refusal the API can answer with. Thrown anywhere (filter, engine, auth)
// and turned into an error envelope in exactly one place (http/reply.ts).

export type ErrorCode =
  | 'invalid_filter' | 'filter_required' | 'invalid_field' | 'invalid_value' | 'malformed_json'
  | 'malformed_order' | 'no_access' | 'bad_session' | 'bad_login' | 'forbidden' | 'no_endpoint'
  | 'no_version' | 'not_found' | 'method_not_allowed' | 'data_error' | 'no_session' | 'too_many'
  | 'too_large' | 'too_long' | 'bad_file_type' | 'rate_limited' | 'internal' | 'storage' | 'cursor_expired' | 'invalid_rows'
  | 'precondition_failed' | 'idempotency_mismatch' | 'idempotency_in_flight' | 'not_acceptable';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** Members beside `error` and `code` in the answer, as JSON text (`"errors":[…]`). */
    readonly extra = '',
  ) {
    super(message);
  }
}

export const invalidFilter = (segment: string) => new ApiError(400, 'invalid_filter', `Invalid filter definition: ${segment}`);

export const filterRequired = (endpoint: string, verb: 'POST' | 'DELETE') =>
  new ApiError(400, 'filter_required', verb === 'POST'
    ? `No fields specified for record updating. This would update ALL ${endpoint} records for your company. Request aborted.`
    : `No fields specified for record deletion. This would delete ALL ${endpoint} records for your company. Request aborted.`);

export const invalidField = (field: string) => new ApiError(400, 'invalid_field', `Field verification failed, invalid field ${field}`);
export const invalidValue = (field: string) => new ApiError(400, 'invalid_value', `Field verification failed, invalid value for ${field}`);
export const malformedJson = (why: string) => new ApiError(400, 'malformed_json', `Malformed JSON body: ${why}`);
export const malformedOrder = (header: string) => new ApiError(400, 'malformed_order', `Malformed result ordering value: ${header}`);
export const noAccess = (signature: string) => new ApiError(401, 'no_access', `You do not have access to the API. Your signature: ${signature}`);
export const badSession = () => new ApiError(401, 'bad_session', 'Bad session token.');
export const badLogin = () => new ApiError(401, 'bad_login', 'Invalid username or password');
export const forbidden = (message: string) => new ApiError(403, 'forbidden', message);
export const accessDenied = (verb: string, endpoint: string, need: string) => forbidden(`Access denied: ${verb} on ${endpoint} requires ${need}`);
export const noEndpoint = (endpoint: string) => new ApiError(404, 'no_endpoint', `Endpoint ${endpoint} does not exist`);
export const noVersion = (version: string) => new ApiError(404, 'no_version', `API version ${version} is not supported`);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const methodNotAllowed = (verb: string, endpoint: string, allow: readonly string[]) =>
  new ApiError(405, 'method_not_allowed', `Method ${verb} not supported on endpoint ${endpoint}`, { allow: allow.join(', ') });
export const notAcceptable = (accept: string, offered: readonly string[]) =>
  new ApiError(406, 'not_acceptable', `No format in Accept: ${accept} can be answered; this list answers ${offered.join(', ')}`);
export const dataError = (what: string) => new ApiError(409, 'data_error', `Data Error: ${what}`);
export const noSession = () => new ApiError(400, 'no_session', 'No session to log out');
export const tooMany = (n: number, max: number) => new ApiError(400, 'too_many', `Too many records in one request: ${n} (at most ${max})`);
export const tooLarge = (max: number) => new ApiError(413, 'too_large', `Request body exceeds ${max} bytes`, { connection: 'close' });
export const tooLong = () => new ApiError(414, 'too_long', 'Request line too long');
export const rateLimited = (message: string, retryAfter: number, headers: Record<string, string> = {}) =>
  new ApiError(429, 'rate_limited', message, { 'retry-after': String(retryAfter), ...headers });
export const cursorExpired = (value: string) =>
  new ApiError(410, 'cursor_expired', `Cursor ${value} is older than the retained changes; resynchronise`);
export const preconditionFailed = (sent: string) => new ApiError(412, 'precondition_failed', `Record changed since version ${sent}`);
export const idempotencyMismatch = (key: string) =>
  new ApiError(422, 'idempotency_mismatch', `Idempotency-Key ${key} was used for another request`);
export const idempotencyInFlight = (key: string) =>
  new ApiError(409, 'idempotency_in_flight', `A request with Idempotency-Key ${key} is still running`);
/** One refused row of a CSV import: its number (data rows from 1), the field, and why. */
export interface RowError { readonly row: number; readonly field: string | null; readonly error: string }
/** Rows listed at most (the message counts them all). */
/** Refused rows an invalid_rows answer lists. */
export const ROW_ERRORS_LISTED = 1000;
export const invalidRows = (count: number, errors: readonly RowError[]) =>
  new ApiError(400, 'invalid_rows', `Invalid rows in CSV: ${count}`, {}, `"errors":${JSON.stringify(errors.slice(0, ROW_ERRORS_LISTED))}`);
export const internal = (reference: string) => new ApiError(500, 'internal', `Internal error, reference ${reference}`);

/** An operator's action refused (the CLI prints its message as one line, exit code 1). */
export class AdminError extends Error {}
