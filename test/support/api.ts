// The contract's JSON as the tests read it: the envelope, the replies
// of writes, logins and errors, and the records of each endpoint. These
// types only let a test name what it reads; what the values are is what its
// assertions check. `TestResponse.body` stays `unknown`: a test that reads an
// envelope says so (`envelope`, `reply`, `expectOk`), and the envelope's presence
// is asserted where it is read.
import assert from 'node:assert/strict';
import type { TestResponse } from './client.ts';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject { [key: string]: Json }

export interface Session { hash: string; time: number; expiry: number; company_id: number; user_id: number }
export interface RequestBlock {
  url: string; endpoint: string; requested_version: string; api_version: number; request_method: string; timestamp: number;
  session: Session | null;
}
export interface Pagination { total_pages: number; total_records: number }
/** A reply of the service (the wire's early refusals carry no `request`; their tests compare the body whole). */
export interface Envelope<R = unknown> { request: RequestBlock; pagination?: Pagination; response: R }

export interface ErrorReply { error: string; code: string; [extra: string]: Json }
export interface Inserted { records_inserted: number; ids: number[]; secrets?: string[] }
export interface Updated { records_updated: number; records_found: number }
export interface Deleted { records_deleted: number; records_found: number }
export interface LoggedIn { message: string; user_token: string }

type Data = JsonObject | null;
interface Owned { id: number; company_id: number; data: Data; modified: string; version: number }

// A record's own fields (as another record embeds it), then the record as its endpoint lists it, with its embeds:
// `| null` where the contract shows an absent or hidden record as null, none where it shows all members null.
export interface CompanyFields { id: number; name: string; created: string; logo: string | null; subdomain: string | null;
  styles: string | null; data: Data; parent_id: number | null; modified: string; version: number }
export interface Company extends CompanyFields { parentcompany: CompanyFields | null }
export interface PlaceFields extends Owned { description: string; creationdate: string }
export interface Place extends PlaceFields { company: CompanyFields | null }
export interface ExternalType extends Owned { external_itemtype_id: number | null; description: string }
export interface FileFields extends Owned { upload_uuid: string; upload_endpoint: string; filedate: string; description: string;
  filename: string | null; asset_id: number | null; mimetype: string | null; size: number | null }
export interface FileRecord extends FileFields { asset: AssetShort | null; company: CompanyFields | null }
/** An asset as other records embed it. */
export interface AssetShort { id: number; asset_no: string; serial_no: string; status: string; next_check: string | null;
  period: number | null; company_id: number; location_id: number | null; department_id: number | null; description: string; data: Data }
export interface Asset extends Owned { asset_no: string; serial_no: string; description: string; status: string;
  next_check: string | null; last_check: string | null; last_result: string | null; period: number | null; location_id: number | null;
  department_id: number | null; external_type_id: number | null; date_added: string;
  company: CompanyFields | null; location: PlaceFields | null; department: PlaceFields | null; externaltype: ExternalType; files: FileFields[] }
export interface QueueEntry extends Owned { external_type_id: number | null; manufacturer: string; model: string; asset_no: string;
  serial_no: string; description: string; next_date: string | null; period: number | null; status: string; date_added: string;
  department_id: number | null; location_id: number | null; last_error: string | null; requested_date: string | null;
  released: number; asset_id: number | null;
  company: CompanyFields | null; externaltype: ExternalType; department: PlaceFields | null; location: PlaceFields | null }
export interface Reminder extends Owned { asset_id: number; user_id: number | null; due_date: string; remind_date: string; message: string;
  sent: number; acknowledged: number; asset: AssetShort | null; user: UserFields | null }
export interface UserFields extends Owned { username: string; email: string; first_name: string; last_name: string; phone: string;
  email_confirmed: number; password_last_changed: string | null; permissions: JsonObject; reminders: number }
export interface User extends UserFields { company: CompanyFields | null }
export interface Message extends Owned { sender_user_id: number | null; target_user_id: number | null; message_read: number;
  date_range_start: string | null; date_range_end: string | null; messagetext: string; sender: UserFields | null; recipient: UserFields | null }
export interface AuditEntry { id: number; asset_id: number | null; company_id: number; user_id: number | null; file_id: number | null;
  logdate: string; message: string | null; olddata: JsonObject; newdata: JsonObject; endpoint: string; record_id: number | null;
  action: string; client_id: number | null; ip: string | null;
  asset: AssetShort | null; company: CompanyFields | null; user: UserFields | null; file: FileFields | null }
export interface Change { seq: number; endpoint: string; record_id: number | null; op: string; changed: string; company_id: number | null;
  data: JsonObject }
export interface WebhookRecord extends Owned { url: string; events: string[] | null; active: number; created: string }
export interface WebhookDelivery { id: number; webhook_id: number; company_id: number; event_id: string; event: string; attempt: number;
  status: string; response_status: number | null; error: string | null; created: string; next_attempt: string | null }
/** The body of a webhook delivery: the event and the record as GET shows it without embeds. */
export interface WebhookEvent { id: string; event: string; timestamp: number; company_id: number; data: JsonObject }

/** The record each endpoint lists. */
/** A measurement point of a check, as stored: the readings as sent, and their verdicts. */
export interface CheckPoint { name: string; unit: string; nominal: number | null; lower_limit: number | null; upper_limit: number | null;
  as_found: number | null; as_left: number | null; uncertainty: number | null; found_verdict: string | null; left_verdict: string | null;
  verdict: string }
export interface AssetCheck extends Owned { asset_id: number; check_type: string; check_date: string; performed_by: string;
  certificate_no: string; result: string; points: CheckPoint[]; standard_ids: number[]; file_id: number | null; next_check: string | null;
  created: string; asset: AssetShort | null; file: FileFields | null; standards: (AssetShort | Record<string, null>)[] }
export interface Records {
  companies: Company; locations: Place; departments: Place; externaltypes: ExternalType; files: FileRecord; assets: Asset;
  assetqueue: QueueEntry; assetreminders: Reminder; users: User; messages: Message; auditlog: AuditEntry; changes: Change;
  webhooks: WebhookRecord; webhookdeliveries: WebhookDelivery; assetchecks: AssetCheck;
}
export type Endpoint = keyof Records;
/** A path under `/3.0/` that lists an endpoint's records: its name, then filter segments. */
export type ListPath<E extends Endpoint> = E | `${E}/${string}`;

/** A JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `body` as the contract's envelope: asserts it is an object with a `response` member. */
export function asEnvelope<R>(body: unknown, text: string): Envelope<R> {
  assert.ok(isObject(body) && 'response' in body, `not an envelope: ${text.slice(0, 300)}`);
  return body as unknown as Envelope<R>;
}

/** `response` as an error reply: asserts it has a string `error`. */
export function asError(response: unknown, text: string): ErrorReply {
  assert.ok(isObject(response) && typeof response.error === 'string', `not an error reply: ${text.slice(0, 300)}`);
  return response as ErrorReply;
}

/** Asserts the status (showing the body when it differs) and returns the envelope's `response`, read as `R`. */
export function expectOk<R = unknown>(res: TestResponse, status = 200): R {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  return res.reply<R>();
}

/** Asserts an error reply with exactly this status and message. */
export function expectError(res: TestResponse, status: number, message: string): void {
  assert.equal(res.status, status, `expected ${status} "${message}", got ${res.status}: ${res.text}`);
  assert.equal(res.errorReply.error, message);
}

/** The endpoint a reply names in its request block, when its body is an envelope with one. */
export const endpointOf = (res: TestResponse): string | undefined => (res.body as Partial<Envelope> | null)?.request?.endpoint;
