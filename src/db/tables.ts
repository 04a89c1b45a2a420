// Column types of the tables typed code touches directly (auth, CLI, jobs).
// Resource tables are reached through their definitions and the generic engine.
import type { Generated } from 'kysely';

export interface ClientsTable {
  id: Generated<number>;
  company_id: number;
  name: string;
  fingerprint: string;
  impersonation: number;
  created: string;
  revoked: string | null;
}

export interface CompaniesTable {
  id: Generated<number>;
  name: string;
  created: string;
  logo: string | null;
  subdomain: string | null;
  styles: string | null;
  data: string | null;
  parent_id: number | null;
  modified: string;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  phone: string;
  email_confirmed: number;
  password_last_changed: string | null;
  permissions: string | null;
  company_id: number;
  reminders: number;
  data: string | null;
  modified: string;
  password_hash: string | null;
}

export interface AuditlogTable {
  id: Generated<number>;
  asset_id: number | null;
  company_id: number | null;
  user_id: number | null;
  file_id: number | null;
  logdate: string;
  message: string;
  olddata: string;
  newdata: string;
  endpoint: string;
  record_id: number | null;
  action: string;
  client_id: number | null;
  ip: string | null;
}

export interface SessionsTable {
  id: Generated<number>;
  token_hash: string;
  /** Null for a session opened on the portal (no certificate). */
  client_id: number | null;
  user_id: number;
  company_id: number;
  created: string;
  last_used: string;
  expires: string;
}

export interface LoginThrottleTable {
  username: string;
  failures: number;
  retry_at: string;
}

export interface LoginBudgetTable {
  client_id: number;
  window_start: string;
  failures: number;
}

/** The portal's failed logins per client address (it has no certificate to count them against). */
export interface LoginAddressBudgetTable {
  address: string;
  window_start: string;
  failures: number;
}

export interface WebhooksTable {
  id: Generated<number>;
  company_id: number;
  url: string;
  events: string;
  active: number;
  data: string | null;
  created: string;
  modified: string;
  secret: string;
  previous_secret: string | null;
  previous_until: string | null;
  cursor: number;
  failing_since: string | null;
  lease_owner: string | null;
  lease_until: string | null;
}

export interface EventsTable {
  seq: Generated<number>;
  event_id: string;
  event: string;
  endpoint: string;
  record_id: number | null;
  op: string;
  company_id: number | null;
  scope_id: number | null;
  data: string;
  created: string;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  company_id: number;
  event_seq: number;
  event_id: string;
  event: string;
  attempt: number;
  status: string;
  response_status: number | null;
  error: string | null;
  created: string;
  next_attempt: string | null;
  modified: string;
}

export interface DueNoticesTable {
  asset_id: number;
  due_date: string;
  kind: string;
}

export interface MailOutboxTable {
  id: Generated<number>;
  company_id: number;
  user_id: number;
  /** digest | weekly */
  kind: string;
  data: string | null;
  attempt: number;
  /** pending | retrying | delivered | failed (the outbox's states, db/outbox.ts) */
  status: string;
  next_attempt: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  /** The address the last attempt went to, and the SMTP server's answer or the error. */
  recipient: string | null;
  response: string | null;
  error: string | null;
  created: string;
  modified: string;
}

export interface MailDigestItemsTable {
  id: Generated<number>;
  company_id: number;
  user_id: number;
  asset_id: number;
  due_date: string;
  overdue: number;
  /** Null until the item is sealed into a digest (a mail_outbox row). */
  digest_id: number | null;
}

export interface WeeklyReportsTable { company_id: number; week: string; created: string }

export interface CalendarFeedsTable {
  user_id: number;
  token_hash: string;
  created: string;
}

export interface ServiceSecretsTable {
  name: string;
  secret: string;
  created: string;
}

export interface Tables {
  mail_outbox: MailOutboxTable;
  mail_digest_items: MailDigestItemsTable;
  weekly_reports: WeeklyReportsTable;
  calendar_feeds: CalendarFeedsTable;
  service_secrets: ServiceSecretsTable;
  webhooks: WebhooksTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  due_notices: DueNoticesTable;
  sessions: SessionsTable;
  login_throttle: LoginThrottleTable;
  login_budget: LoginBudgetTable;
  login_address_budget: LoginAddressBudgetTable;
  clients: ClientsTable;
  companies: CompaniesTable;
  users: UsersTable;
  auditlog: AuditlogTable;
}
