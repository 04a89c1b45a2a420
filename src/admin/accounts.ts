// Operator actions: what the CLI does, as functions the tests and
// the demo share. Each writes its audit entry like any other change.
import { X509Certificate } from 'node:crypto';
import type { Database, Db } from '../db/database.ts';
import { insertAudit } from '../engine/audit.ts';
import { CLIENTS_CHANNEL } from '../db/clients.ts';
import { deleteClientSessions } from '../db/sessions.ts';
import { identityOf, spkiFingerprint } from '../auth/certificate.ts';
import { formatDatetime, systemClock, type Clock } from '../model/dates.ts';
import { JsonObject, jsonObjectText } from '../model/json.ts';
import { createRecords, inWriteTx } from '../engine/write.ts';
import { storePassword } from '../resources/password.ts';
import { operatorContext } from '../resources/registry.ts';
import { users } from '../resources/users.ts';
import type { Level } from '../model/types.ts';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN } from '../auth/passwords.ts';
import type { AuditEntry } from '../engine/types.ts';
import { AdminError } from '../errors.ts';

export { AdminError };

/** The operator's audit entry about a company's record (no certificate, no session). */
export async function audit(database: Database, db: Db, clock: Clock, companyId: number, entry: Omit<AuditEntry, 'companyId'>): Promise<void> {
  await insertAudit(operatorContext(database, companyId, clock), db, formatDatetime(clock.now()), [{ ...entry, companyId }]);
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
    await audit(database, db, clock, id, { endpoint: 'companies', action: 'create', recordId: id, message: `Created companies record ${id}`,
      newdata: jsonObjectText([['name', JSON.stringify(name)], ['parent_id', String(parentId)]]) });
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

const SELF_SIGNED_ONLY = 'the service accepts self-signed client certificates only (the certificate\'s own key is the identity; '
  + 'no certificate authority vouches for it): `asset-tracker cert create DIR` makes one';

/** Why every call with this certificate would get 401, or null: only a current, self-signed certificate is an identity. */
function refusal(pem: string, cert: X509Certificate, now: number): string | null {
  const count = pem.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;
  if (count > 1) return `the file holds a chain of ${count} certificates; ${SELF_SIGNED_ONLY}`;
  if (!identityOf(cert, 1).selfSigned) {
    return cert.issuer === cert.subject
      ? `the certificate names itself as its issuer, but its signature does not verify with its own key; ${SELF_SIGNED_ONLY}`
      : `the certificate is issued by ${cert.issuer.replace(/\n/g, ', ')}, not self-signed; ${SELF_SIGNED_ONLY}`;
  }
  if (Date.parse(cert.validTo) < now) return `the certificate expired on ${cert.validTo}`;
  if (Date.parse(cert.validFrom) > now) return `the certificate is not valid before ${cert.validFrom}`;
  return null;
}

/**
 * Registers a client certificate for a company; refuses one the service would never
 * accept (a chain, a CA-issued or forged certificate, an expired or future one), saying why.
 */
export async function addClient(database: Database, o: { companyId: number; certPem: string; name?: string; impersonation?: boolean },
  clock: Clock = systemClock): Promise<ClientInfo> {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(o.certPem);
  } catch {
    throw new AdminError('the file does not hold a PEM certificate');
  }
  const refused = refusal(o.certPem, cert, clock.now().getTime());
  if (refused) throw new AdminError(refused);
  const fingerprint = spkiFingerprint(cert);
  const name = o.name ?? cert.subject.replace(/^CN=/, '');
  const now = formatDatetime(clock.now());
  const info = await database.transaction(async (db): Promise<ClientInfo> => {
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
    await audit(database, db, clock, o.companyId, { endpoint: 'clients', action: 'create', recordId: id, message: `Registered certificate ${id}`,
      newdata: jsonObjectText([['fingerprint', JSON.stringify(fingerprint)], ['impersonation', o.impersonation ? '1' : '0']]) });
    return { id, companyId: o.companyId, name, fingerprint, impersonation: !!o.impersonation, created: now, revoked: null };
  });
  // Every certificate cache of this process forgets at once (other instances hear it from the database).
  database.changes?.announce(CLIENTS_CHANNEL);
  return info;
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
    // A revoked certificate's sessions end with it.
    await deleteClientSessions(db, id);
    await audit(database, db, clock, Number(client.company_id), { endpoint: 'clients', action: 'update', recordId: id,
      message: `Revoked certificate ${id}`, newdata: jsonObjectText([['revoked', JSON.stringify(now)]]) });
  });
  database.changes?.announce(CLIENTS_CHANNEL);
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

/** Sets a user's password (the CLI's `--password-stdin`) exactly as `POST /3.0/password` would; ends the user's sessions. */
export async function setPassword(database: Database, userId: number, password: string, clock: Clock = systemClock): Promise<void> {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) throw new AdminError(`a password needs ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  const user = await database.db.selectFrom('users').select('company_id').where('id', '=', userId).executeTakeFirst();
  if (!user) throw new AdminError(`user ${userId} does not exist`);
  const hash = await hashPassword(password);
  await inWriteTx(operatorContext(database, Number(user.company_id), clock), async (tx) => {
    const row = await tx.find(users.def, userId);
    if (!row) throw new AdminError(`user ${userId} does not exist`);
    await storePassword(tx, row, hash);
  });
}
