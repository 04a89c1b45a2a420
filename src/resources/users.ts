// Users (spec §7.13). Passwords are set only through `password`; no hash ever
// leaves the database.
import type { Resource } from '../engine/resource.ts';
import { invalidValue } from '../errors.ts';
import { JsonObject, parseJson } from '../model/json.ts';
import type { SqlValue } from '../model/types.ts';
import { ADMIN_WRITES, ALL_VERBS, companyId, data, embed, flag, id, modified, required, text } from './fields.ts';

export const LEVELS = ['readonly', 'user', 'admin'] as const;

/** `permissions` is null or `{"level": "admin"|"user"|"readonly", "can_create_companies": bool}` (spec §3). */
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

export const users: Resource = {
  def: {
    name: 'users', table: 'users', verbs: ALL_VERBS, scopeColumn: 'company_id', access: ADMIN_WRITES,
    fields: [
      id, required('username'), required('email', { format: 'email' }), text('first_name'), text('last_name'), text('phone'),
      flag('email_confirmed', 0), { name: 'password_last_changed', type: 'date', nullable: true },
      { name: 'permissions', type: 'json', nullable: true, writable: 'always', objectOnly: true },
      companyId, flag('reminders', 1), data, modified,
    ],
    relations: [embed('company', 'companies', 'company_id')],
    unique: [['username']],
  },
  hooks: {
    beforeCreate: (_tx, record) => checkPermissions(record.permissions),
    beforeUpdate: (_tx, _old, changes) => checkPermissions(changes.permissions),
  },
};
