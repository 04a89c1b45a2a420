// Operator actions (spec §12): what the CLI does, as functions the tests and
// the demo share. Each writes its audit entry like any other change.
import { X509Certificate } from 'node:crypto';
import type { Database } from './db/database.ts';
import { spkiFingerprint } from './auth/certificate.ts';
import { formatDate, formatDatetime, systemClock, type Clock } from './model/dates.ts';
import { JsonObject, jsonObjectText } from './model/json.ts';
import { DEFAULT_LIMITS, type Ctx } from './engine/context.ts';
import { createRecords } from './engine/write.ts';
import { createRegistry } from './resources/registry.ts';
import { users } from './resources/users.ts';
import type { Level } from './model/types.ts';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN } from './auth/passwords.ts';
import { endUserSessions } from './auth/sessions.ts';

export class AdminError extends Error {}

async function audit(db: Database['db'], now: string, endpoint: string, action: string, recordId: number, companyId: number, message: string, newdata: string) {
  await db.insertInto('auditlog').values({
    asset_id: null, company_id: companyId, user_id: null, file_id: null, logdate: now, message, olddata: '{}', newdata,
    endpoint, record_id: recordId, action, client_id: null, ip: null,
  }).execute();
}

export async function addCompany(database: Database, name: string, parentId: number | null, clock: Clock = systemClock): Promise<number> {
  if (!name.trim()) throw new AdminError('a company needs a name');
  const now = formatDatetime(clock.now());
  return database.transaction(async (db) => {
    if (parentId !== null && !(await db.selectFrom('companies').select('id').where('id', '=', parentId).executeTakeFirst())) {
      throw new AdminError(`company ${parentId} does not exist`);
    }
    const row = await db.insertInto('companies').values({ name, created: now, modified: now, parent_id: parentId })
      .returning('id').executeTakeFirstOrThrow();
    const id = Number(row.id);
    await audit(db, now, 'companies', 'create', id, id, `Created companies record ${id}`,
      jsonObjectText([['name', JSON.stringify(name)], ['parent_id', String(parentId)]]));
    return id;
  });
}

export interface ClientInfo {
  readonly id: number;
  readonly companyId: number;
  readonly name: string;
  readonly fingerprint: string;
  readonly impersonation: boolean;
  readonly created: string;
  readonly revoked: string | null;
}

export async function addClient(database: Database, o: { companyId: number; certPem: string; name?: string; impersonation?: boolean },
  clock: Clock = systemClock): Promise<ClientInfo> {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(o.certPem);
  } catch {
    throw new AdminError('the file does not hold a PEM certificate');
  }
  const fingerprint = spkiFingerprint(cert);
  const name = o.name ?? cert.subject.replace(/^CN=/, '');
  const now = formatDatetime(clock.now());
  return database.transaction(async (db) => {
    if (!(await db.selectFrom('companies').select('id').where('id', '=', o.companyId).executeTakeFirst())) {
      throw new AdminError(`company ${o.companyId} does not exist`);
    }
    if (await db.selectFrom('clients').select('id').where('fingerprint', '=', fingerprint).executeTakeFirst()) {
      throw new AdminError(`a certificate with fingerprint ${fingerprint} is already registered`);
    }
    const row = await db.insertInto('clients').values({
      company_id: o.companyId, name, fingerprint, impersonation: o.impersonation ? 1 : 0, created: now, revoked: null,
    }).returning('id').executeTakeFirstOrThrow();
    const id = Number(row.id);
    await audit(db, now, 'clients', 'create', id, o.companyId, `Registered certificate ${id}`,
      jsonObjectText([['fingerprint', JSON.stringify(fingerprint)], ['impersonation', o.impersonation ? '1' : '0']]));
    return { id, companyId: o.companyId, name, fingerprint, impersonation: !!o.impersonation, created: now, revoked: null };
  });
}

export async function listClients(database: Database): Promise<ClientInfo[]> {
  const rows = await database.db.selectFrom('clients').selectAll().orderBy('id').execute();
  return rows.map((r) => ({
    id: Number(r.id), companyId: Number(r.company_id), name: r.name, fingerprint: r.fingerprint,
    impersonation: r.impersonation === 1, created: r.created, revoked: r.revoked,
  }));
}

export async function revokeClient(database: Database, id: number, clock: Clock = systemClock): Promise<void> {
  const now = formatDatetime(clock.now());
  await database.transaction(async (db) => {
    const client = await db.selectFrom('clients').select(['company_id', 'revoked']).where('id', '=', id).executeTakeFirst();
    if (!client) throw new AdminError(`certificate ${id} does not exist`);
    if (client.revoked) throw new AdminError(`certificate ${id} was already revoked on ${client.revoked}`);
    await db.updateTable('clients').set({ revoked: now }).where('id', '=', id).execute();
    // A revoked certificate's sessions end with it (spec §2.2).
    await db.deleteFrom('sessions').where('client_id', '=', id).execute();
    await audit(db, now, 'clients', 'update', id, Number(client.company_id), `Revoked certificate ${id}`,
      jsonObjectText([['revoked', JSON.stringify(now)]]));
  });
}

/** The engine context of the operator: full access to a company's tree, audited without a certificate. */
export function operatorContext(database: Database, companyId: number, clock: Clock = systemClock): Ctx {
  return {
    database, catalog: createRegistry(), clock, limits: DEFAULT_LIMITS, baseUrl: '', ip: null, blobs: null,
    principal: { clientId: null, clientCompanyId: companyId, impersonation: false, companyId, session: null, level: 'basic', canCreateCompanies: true },
  };
}

export interface NewUser { companyId: number; username: string; email: string; level?: Level; firstName?: string; lastName?: string }

/** Creates a user exactly as `PUT /3.0/users` would (same checks, same audit entry). */
export async function addUser(database: Database, u: NewUser, clock: Clock = systemClock): Promise<number> {
  if (!(await database.db.selectFrom('companies').select('id').where('id', '=', u.companyId).executeTakeFirst())) {
    throw new AdminError(`company ${u.companyId} does not exist`);
  }
  const body = new JsonObject();
  body.entries.set('username', u.username);
  body.entries.set('email', u.email);
  if (u.firstName) body.entries.set('first_name', u.firstName);
  if (u.lastName) body.entries.set('last_name', u.lastName);
  if (u.level) {
    const permissions = new JsonObject();
    permissions.entries.set('level', u.level);
    body.entries.set('permissions', permissions);
  }
  const [id] = await createRecords(operatorContext(database, u.companyId, clock), users, [body]);
  return id!;
}

/** Sets a user's password (the CLI's `--password-stdin`); ends the user's sessions. */
export async function setPassword(database: Database, userId: number, password: string, clock: Clock = systemClock): Promise<void> {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) throw new AdminError(`a password needs ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  const hash = await hashPassword(password);
  const now = clock.now();
  await database.transaction(async (db) => {
    const user = await db.selectFrom('users').select('company_id').where('id', '=', userId).executeTakeFirst();
    if (!user) throw new AdminError(`user ${userId} does not exist`);
    await db.updateTable('users').set({ password_hash: hash, password_last_changed: formatDate(now), modified: formatDatetime(now) })
      .where('id', '=', userId).execute();
    await endUserSessions(db, userId, null);
    await audit(db, formatDatetime(now), 'users', 'update', userId, Number(user.company_id), `Updated users record ${userId}`,
      jsonObjectText([['password', '"***"'], ['password_last_changed', JSON.stringify(formatDate(now))]]));
  });
}
