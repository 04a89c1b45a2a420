// Helpers shared by the resource tests (companies, assets, assetqueue, messages,
// users, auditlog, departments/locations/externaltypes): exact-status assertions
// and one-line create/read calls over the real HTTPS API.
import { sql } from 'kysely';
import assert from 'node:assert/strict';
import type { AuditEntry, Endpoint, Inserted, ListPath, Records, Updated } from '../support/api.ts';
import { expectOk } from '../support/api.ts';
import type { TestClient, TestResponse } from '../support/client.ts';
import type { Service } from '../support/harness.ts';
import { formatDate, formatDatetime } from '../../src/model/dates.ts';

// The service's start and stop now live with the shared factories (test/support/factories.ts).
export { startStill as start, stopService as stop } from '../support/factories.ts';

export const nowText = (svc: Service) => formatDatetime(svc.clock.now());
export const todayText = (svc: Service) => formatDate(svc.clock.now());

export { expectError, expectOk } from '../support/api.ts';

/** Asserts a 409 whose message starts with `Data Error: ` (and contains `part`, when given). */
export function expectDataError(res: TestResponse, part?: string): void {
  assert.equal(res.status, 409, `expected 409, got ${res.status}: ${res.text}`);
  const message = res.errorReply.error;
  assert.ok(message.startsWith('Data Error: '), message);
  if (part !== undefined) assert.ok(message.includes(part), `"${message}" should contain "${part}"`);
}

/** PUT one record; returns its id. */
export async function create(client: TestClient, endpoint: string, body: unknown): Promise<number> {
  const r = expectOk<Inserted>(await client.put(`/3.0/${endpoint}`, body), 201);
  assert.equal(r.records_inserted, 1);
  return r.ids[0]!;
}

/** GET every record matching the path's filters (one page). */
export async function list<E extends Endpoint>(client: TestClient, path: ListPath<E>): Promise<Records[E][]> {
  return expectOk(await client.get(`/3.0/${path}`));
}

/** GET one record by id; fails when it is not visible. */
export async function one<E extends Endpoint>(client: TestClient, endpoint: E, id: number): Promise<Records[E]> {
  const rows = await list<E>(client, `${endpoint}/id=${id}`);
  assert.equal(rows.length, 1, `${endpoint} ${id} should be visible`);
  return rows[0]!;
}

/** POST to records matched by `filter`; returns the counts. */
export async function update(client: TestClient, path: string, body: unknown): Promise<Updated> {
  return expectOk(await client.post(`/3.0/${path}`, body));
}

/** Audit entries about one record, oldest first. */
export async function auditOf(client: TestClient, endpoint: string, recordId: number): Promise<AuditEntry[]> {
  return list(client, `auditlog/endpoint=${endpoint}/record_id=${recordId}`);
}

/** Number of rows of a table, straight from the database (to show nothing was written). */
export async function countRows(svc: Service, table: 'assets' | 'assetqueue' | 'auditlog' | 'companies' | 'messages' | 'users' | 'assetreminders'): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${sql.table(table)}`.execute(svc.database.db);
  return Number(rows[0]!.n);
}

/** The members of a record, in order (throws for a missing one, as `Object.keys` does). */
export const keys = (o: object | null | undefined) => Object.keys(o!);

/** A name unique within this process (usernames and subdomains are unique system-wide). */
let counter = 0;
export const unique = (prefix: string) => `${prefix}${++counter}${Math.random().toString(36).slice(2, 6)}`;

/** Field lists in the contract's order: a record's own members, as it shows embedded (`version` last). */
export const COMPANY_FIELDS = ['id', 'name', 'created', 'logo', 'subdomain', 'styles', 'data', 'parent_id', 'modified', 'version'];
export const PLACE_FIELDS = ['id', 'company_id', 'description', 'creationdate', 'data', 'modified', 'version'];
export const EXTERNALTYPE_FIELDS = ['id', 'external_itemtype_id', 'company_id', 'description', 'data', 'modified', 'version'];
export const FILE_FIELDS = ['id', 'upload_uuid', 'upload_endpoint', 'filedate', 'description', 'filename', 'asset_id', 'company_id',
  'data', 'mimetype', 'size', 'modified', 'version'];
export const ASSET_FIELDS = ['id', 'company_id', 'asset_no', 'serial_no', 'description', 'status', 'next_check', 'last_check', 'last_result', 'period',
  'location_id', 'department_id', 'external_type_id', 'date_added', 'data', 'modified', 'version'];
export const ASSET_SHORT = ['id', 'asset_no', 'serial_no', 'status', 'next_check', 'period', 'company_id', 'location_id', 'department_id',
  'description', 'data'];
export const QUEUE_FIELDS = ['id', 'company_id', 'external_type_id', 'manufacturer', 'model', 'asset_no', 'serial_no', 'description',
  'next_date', 'period', 'status', 'date_added', 'department_id', 'location_id', 'last_error', 'requested_date', 'released', 'data',
  'asset_id', 'modified', 'version'];
export const USER_FIELDS = ['id', 'username', 'email', 'first_name', 'last_name', 'phone', 'email_confirmed', 'password_last_changed',
  'permissions', 'company_id', 'reminders', 'data', 'modified', 'version'];
export const MESSAGE_FIELDS = ['id', 'sender_user_id', 'target_user_id', 'company_id', 'message_read', 'date_range_start',
  'date_range_end', 'messagetext', 'data', 'modified', 'version'];
export const AUDIT_FIELDS = ['id', 'asset_id', 'company_id', 'user_id', 'file_id', 'logdate', 'message', 'olddata', 'newdata',
  'endpoint', 'record_id', 'action', 'client_id', 'ip'];

/** The members of a record with its embeds: its own fields, the embeds, then its version. */
export const recordKeys = (fields: readonly string[], ...embeds: string[]) =>
  [...fields.filter((f) => f !== 'version'), ...embeds, ...fields.filter((f) => f === 'version')];

export const allNull = (fields: readonly string[]) => Object.fromEntries(fields.map((f) => [f, null]));
