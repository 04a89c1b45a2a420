// Users. Passwords are set only through `password`; no hash ever
// leaves the database.
import { exceeds } from '../auth/access.ts';
import { forbidden, invalidValue } from '../errors.ts';
import { JsonObject, parseJson } from '../model/json.ts';
import type { SqlValue } from '../model/types.ts';
import { ADMIN_WRITES, ALL_VERBS, companyId, data, embed, flag, id, modified, version, required, text } from './fields.ts';
import type { Resource, WriteTx } from '../engine/types.ts';

export const LEVELS = ['readonly', 'user', 'admin'] as const;

/** `permissions` is null or `{"level": "admin"|"user"|"readonly", "can_create_companies": bool}`. */
export function checkPermissions(value: SqlValue | undefined): void {
  if (value === undefined || value === null) return;
  const v = parseJson(String(value));
  if (!(v instanceof JsonObject)) throw invalidValue('permissions');
  for (const [k, x] of v.entries) {
    const ok = k === 'level' ? x === null || (typeof x === 'string' && (LEVELS as readonly string[]).includes(x))
      : k === 'can_create_companies' ? typeof x === 'boolean' : false;
    if (!ok) throw invalidValue('permissions');
  }
}

/** A session may not change its own permissions, nor grant a level or flag it does not hold. */
function checkGrant(tx: WriteTx, permissions: SqlValue | undefined, targetId: SqlValue | undefined, old: SqlValue | undefined): void {
  const p = tx.ctx.principal;
  if (!p.session || permissions === undefined || permissions === old) return;
  if (targetId === p.session.userId) throw forbidden('Access denied: a session cannot change its own permissions');
  if (exceeds(permissions === null ? null : String(permissions), p)) {
    throw forbidden('Access denied: a session cannot grant a level or flag it does not hold');
  }
}

export const users: Resource = {
  def: {
    name: 'users', table: 'users', verbs: ALL_VERBS, scopeColumn: 'company_id', access: ADMIN_WRITES,
    fields: [
      id, required('username'), required('email', { format: 'email' }), text('first_name'), text('last_name'), text('phone'),
      flag('email_confirmed', 0), { name: 'password_last_changed', type: 'date', nullable: true },
      { name: 'permissions', type: 'json', nullable: true, writable: 'always', objectOnly: true },
      companyId, flag('reminders', 1), data, modified, version,
    ],
    relations: [embed('company', 'companies', 'company_id')],
    events: {},
    unique: [['username']],
  },
  hooks: {
    validate: (_ctx, values) => checkPermissions(values.permissions),
    beforeCreate: (tx, record) => checkGrant(tx, record.permissions, undefined, undefined),
    beforeUpdate: (tx, old, changes) => checkGrant(tx, changes.permissions, old.id, old.permissions),
  },
};
