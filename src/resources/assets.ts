// Assets and their check dates (spec §7.2).
import type { Resource, WriteTx } from '../engine/resource.ts';
import { dataError } from '../errors.ts';
import { addMonths } from '../model/dates.ts';
import type { Row } from '../model/types.ts';
import { managerOf } from './companies.ts';
import { ADMIN_WRITES, ALL_VERBS, companyId, data, date, embed, id, modified, ref, required, text } from './fields.ts';

/** A POST/PUT that records a check without naming the next one advances `next_check` by `period` months. */
function advanceNextCheck(record: Row, changes: Row): void {
  if (changes.last_check === undefined || changes.last_check === null || changes.next_check !== undefined) return;
  const period = changes.period !== undefined ? changes.period : record.period;
  if (typeof period === 'number') changes.next_check = addMonths(String(changes.last_check), period);
}

/** A company with an approving system takes new assets only through the queue, except from that system (spec §8.1). */
async function refuseUnapproved(tx: WriteTx, record: Row): Promise<void> {
  const company = await tx.db.selectFrom('companies').select('data').where('id', '=', Number(record.company_id)).executeTakeFirst();
  const manager = managerOf(company?.data);
  const p = tx.ctx.principal;
  if (manager !== null && (p.session !== null || p.clientId !== manager)) {
    throw dataError(`company ${record.company_id} adds assets through assetqueue`);
  }
}

export const assets: Resource = {
  def: {
    name: 'assets', table: 'assets', verbs: ALL_VERBS, scopeColumn: 'company_id', access: ADMIN_WRITES,
    fields: [
      id, companyId, required('asset_no'), text('serial_no'), text('description'), text('status', { default: 'Active' }),
      date('next_check'), date('last_check'), { name: 'period', type: 'int', nullable: true, writable: 'always' },
      ref('location_id', 'locations'), ref('department_id', 'departments'), ref('external_type_id', 'externaltypes'),
      { name: 'date_added', type: 'date', default: 'today' }, data, modified,
    ],
    relations: [
      embed('company', 'companies', 'company_id'),
      embed('location', 'locations', 'location_id'),
      embed('department', 'departments', 'department_id'),
      embed('externaltype', 'externaltypes', 'external_type_id', 'nulls'),
      { name: 'files', resource: 'files', back: 'asset_id', empty: 'null' },
    ],
    unique: [['company_id', 'asset_no']],
    audit: { asset: 'id' },
  },
  hooks: {
    beforeCreate: (_tx, record) => advanceNextCheck({}, record),
    beforeInsert: refuseUnapproved,
    beforeUpdate: (_tx, old, changes) => advanceNextCheck(old, changes),
  },
};
