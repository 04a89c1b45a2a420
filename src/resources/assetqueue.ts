// The approval queue: entries wait (released=0), are released
// into assets (1) or rejected (2) by the company's approving system.
import { sql } from 'kysely';
import { dataError, invalidField, invalidValue } from '../errors.ts';
import { JsonObject, parseJson, stringifyJson } from '../model/json.ts';
import type { Row } from '../model/types.ts';
import { managerOf } from './companies.ts';
import { ALL_VERBS, companyId, data, date, embed, id, modified, version, ref, required, text, USER_CREATES } from './fields.ts';
import type { Resource, WriteTx } from '../engine/types.ts';

const ALLOWED = new Set(['0>1', '0>2', '2>0']);
/** What a released entry still lets the approving system change. */
const AFTER_RELEASE = new Set(['last_error', 'data']);

async function releaseAllowed(tx: WriteTx, entry: Row): Promise<boolean> {
  const p = tx.ctx.principal;
  if (p.session !== null) return false;
  const company = await tx.db.selectFrom('companies').select('data').where('id', '=', Number(entry.company_id)).executeTakeFirst();
  const manager = managerOf(company?.data);
  return manager === null || manager === p.clientId;
}

/** The asset a release creates: the entry's fields, with manufacturer and model kept as data keys. */
function assetFrom(entry: Row): Row {
  const parsed = typeof entry.data === 'string' ? parseJson(entry.data) : null;
  const extra = parsed instanceof JsonObject ? parsed : new JsonObject();
  extra.entries.set('manufacturer', String(entry.manufacturer ?? ''));
  extra.entries.set('model', String(entry.model ?? ''));
  return {
    asset_no: entry.asset_no ?? '', serial_no: entry.serial_no ?? '', description: entry.description ?? '', status: entry.status ?? 'Active',
    next_check: entry.next_date ?? null, period: entry.period ?? null, location_id: entry.location_id ?? null,
    department_id: entry.department_id ?? null, external_type_id: entry.external_type_id ?? null,
    company_id: entry.company_id ?? null, data: stringifyJson(extra),
  };
}

async function beforeUpdate(tx: WriteTx, old: Row, changes: Row): Promise<void> {
  const next = { ...old, ...changes };
  const from = Number(old.released);
  const to = Number(next.released);
  if (changes.asset_id !== undefined && !(from !== 1 && to === 1)) throw invalidValue('asset_id');
  if (from !== to) {
    // `released` is writable only by the approving system.
    if (!(await releaseAllowed(tx, old))) throw invalidField('released');
    if (!ALLOWED.has(`${from}>${to}`)) throw dataError(`assetqueue record ${old.id} cannot go from released=${from} to released=${to}`);
  }
  if (from === 1) {
    const locked = Object.keys(changes).find((k) => !AFTER_RELEASE.has(k) && changes[k] !== old[k]);
    if (locked) throw dataError(`assetqueue record ${old.id} is released and can no longer change ${locked}`);
  }
  if (from !== 1 && to === 1 && (changes.asset_id === undefined || changes.asset_id === null)) {
    if (!next.asset_no) throw dataError(`assetqueue record ${old.id} has no asset_no to create an asset with`);
    changes.asset_id = await tx.create('assets', assetFrom(next));
  }
}

export const assetqueue: Resource = {
  def: {
    name: 'assetqueue', table: 'assetqueue', verbs: ALL_VERBS, scopeColumn: 'company_id', access: USER_CREATES,
    fields: [
      id, companyId, ref('external_type_id', 'externaltypes'), text('manufacturer'), text('model'), text('asset_no'),
      text('serial_no'), required('description'), date('next_date'), { name: 'period', type: 'int', nullable: true, writable: 'always' },
      text('status', { default: 'Active' }), { name: 'date_added', type: 'date', default: 'today' },
      ref('department_id', 'departments'), ref('location_id', 'locations'), text('last_error'),
      { name: 'requested_date', type: 'datetime', default: 'now' },
      { name: 'released', type: 'int', writable: 'update', default: 0 },
      data,
      ref('asset_id', 'assets', 'set-null', { writable: 'update' }),
      modified, version,
    ],
    relations: [
      embed('company', 'companies', 'company_id'),
      embed('externaltype', 'externaltypes', 'external_type_id', 'nulls'),
      embed('department', 'departments', 'department_id'),
      embed('location', 'locations', 'location_id'),
    ],
    audit: { asset: 'asset_id' },
    // A queue entry's transitions have events of their own beside `updated`.
    events: {
      transitions: [
        { kind: { op: 'released', event: 'assetqueue.released' }, when: (old, row) => sql`${old('released')} <> 1 AND ${row('released')} = 1` },
        { kind: { op: 'rejected', event: 'assetqueue.rejected' }, when: (old, row) => sql`${old('released')} <> 2 AND ${row('released')} = 2` },
      ],
    },
  },
  hooks: {
    validate(ctx, values) {
      if (values.released !== undefined && ctx.principal.session !== null) throw invalidField('released');
      if (values.asset_id !== undefined && values.released !== 1) throw invalidValue('asset_id');
    },
    beforeUpdate,
  },
};
