// Field and relation building blocks shared by the resource definitions.
import type { FieldDef, Need, Reference, RelationDef, Verb } from '../model/types.ts';

export const id: FieldDef = { name: 'id', type: 'int' };
export const data: FieldDef = { name: 'data', type: 'json', nullable: true, writable: 'always' };
export const modified: FieldDef = { name: 'modified', type: 'datetime', touch: true };
/** Follows `modified` wherever a record carries it. */
export const version: FieldDef = { name: 'version', type: 'int', counter: true };

/** `company_id` of a tenant record: the caller's company unless the body names another in scope. */
export const companyId: FieldDef = {
  name: 'company_id', type: 'int', writable: 'create',
  references: { resource: 'companies', rule: 'in-scope', onDelete: 'restrict' },
};

export const text = (name: string, o: Partial<FieldDef> = {}): FieldDef =>
  ({ name, type: 'string', writable: 'always', default: '', ...o });

export const required = (name: string, o: Partial<FieldDef> = {}): FieldDef =>
  ({ name, type: 'string', writable: 'always', required: true, ...o });

export const date = (name: string, o: Partial<FieldDef> = {}): FieldDef =>
  ({ name, type: 'date', nullable: true, writable: 'always', ...o });

export const flag = (name: string, fallback: 0 | 1, o: Partial<FieldDef> = {}): FieldDef =>
  ({ name, type: 'bool', writable: 'always', default: fallback, ...o });

/** A reference to a record of the same company. */
export const ref = (name: string, resource: string, onDelete: Reference['onDelete'] = 'restrict', o: Partial<FieldDef> = {}): FieldDef =>
  ({ name, type: 'int', nullable: true, writable: 'always', references: { resource, rule: 'same-company', onDelete }, ...o });

export const embed = (name: string, resource: string, via: string, empty: RelationDef['empty'] = 'null', fields?: readonly string[]): RelationDef =>
  ({ name, resource, via, empty, ...(fields ? { fields } : {}) });

/** The short form of an asset embedded in another record. */
export const ASSET_SHORT = ['id', 'asset_no', 'serial_no', 'status', 'next_check', 'period', 'company_id', 'location_id',
  'department_id', 'description', 'data'] as const;

export const ALL_VERBS: readonly Verb[] = ['GET', 'POST', 'PUT', 'DELETE'];

/** Sessions: everyone reads, admins write. */
export const ADMIN_WRITES: Readonly<Record<Verb, Need>> = { GET: 'readonly', POST: 'admin', PUT: 'admin', DELETE: 'admin' };
/** Basic mode or admin sessions only, for every verb (webhooks). */
export const ADMIN_ONLY: Readonly<Record<Verb, Need>> = { GET: 'admin', POST: 'admin', PUT: 'admin', DELETE: 'admin' };
/** Sessions: users may also create. */
export const USER_CREATES: Readonly<Record<Verb, Need>> = { ...ADMIN_WRITES, PUT: 'user' };
