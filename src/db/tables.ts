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
  client_id: number;
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

export interface Tables {
  sessions: SessionsTable;
  login_throttle: LoginThrottleTable;
  login_budget: LoginBudgetTable;
  clients: ClientsTable;
  companies: CompaniesTable;
  users: UsersTable;
  auditlog: AuditlogTable;
}
