import type { ResourceDef } from '../model/types.ts';
import { ADMIN_WRITES, ALL_VERBS, companyId, data, embed, id, modified, version, required } from './fields.ts';
import type { Resource } from '../engine/types.ts';

/** Departments and locations share one shape. */
function placeDef(name: 'departments' | 'locations'): ResourceDef {
  return {
    name, table: name, verbs: ALL_VERBS, scopeColumn: 'company_id', access: ADMIN_WRITES,
    fields: [id, companyId, required('description'), { name: 'creationdate', type: 'datetime', default: 'now' }, data, modified, version],
    relations: [embed('company', 'companies', 'company_id')],
    events: {},
  };
}

export const departments: Resource = { def: placeDef('departments') };
export const locations: Resource = { def: placeDef('locations') };
