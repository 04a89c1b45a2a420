import { ADMIN_WRITES, ALL_VERBS, companyId, data, id, modified, version, text } from './fields.ts';
import type { Resource } from '../engine/types.ts';

export const externaltypes: Resource = {
  def: {
    name: 'externaltypes', table: 'externaltypes', verbs: ALL_VERBS, scopeColumn: 'company_id', access: ADMIN_WRITES,
    fields: [
      id, { name: 'external_itemtype_id', type: 'int', nullable: true, writable: 'always' }, companyId,
      text('description'), data, modified, version,
    ],
    relations: [],
    events: {},
    unique: [['company_id', 'external_itemtype_id']],
  },
};
