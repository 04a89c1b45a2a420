// Reminders of due check dates.
import { takeAssetCompany } from './owned.ts';
import { ADMIN_WRITES, ALL_VERBS, ASSET_SHORT, data, embed, flag, id, ref, text } from './fields.ts';
import type { Resource } from '../engine/types.ts';

export const assetreminders: Resource = {
  def: {
    name: 'assetreminders', table: 'assetreminders', verbs: ALL_VERBS, scopeColumn: 'company_id',
    access: { ...ADMIN_WRITES, POST: 'user' }, userPost: ['acknowledged'],
    fields: [
      id,
      { name: 'company_id', type: 'int' },
      { name: 'asset_id', type: 'int', writable: 'create', required: true, references: { resource: 'assets', rule: 'same-company', onDelete: 'cascade' } },
      ref('user_id', 'users'),
      { name: 'due_date', type: 'date', writable: 'create', required: true },
      { name: 'remind_date', type: 'date', writable: 'always', required: true },
      text('message'),
      { name: 'sent', type: 'bool', default: 0 },
      flag('acknowledged', 0),
      data,
    ],
    relations: [embed('asset', 'assets', 'asset_id', 'null', ASSET_SHORT), embed('user', 'users', 'user_id')],
    events: {},
    audit: { asset: 'asset_id' },
  },
  hooks: {
    beforeCreate: takeAssetCompany,
  },
};
