// departments, locations and externaltypes: shape,
// required description, per-company uniqueness of external_itemtype_id, and
// deletes blocked by references.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import {
  COMPANY_FIELDS, countRows, create, expectDataError, expectError, expectOk, EXTERNALTYPE_FIELDS, keys, list, nowText, one, PLACE_FIELDS, stop, update, recordKeys,
} from './resources-support.ts';

for (const kind of DB_KINDS) {
  describe(`departments, locations, externaltypes (${kind})`, () => {
    let svc: Service;
    let top: number, child: number;
    let api: TestClient;

    before(async () => { ({ svc, top, child, api } = await buildTenancy(kind, { child: 'Child' })); });
    after(() => stop(svc));

    for (const endpoint of ['departments', 'locations'] as const) {
      it(`${endpoint}: fields in order with the company embed; creationdate and modified set`, async () => {
        const id = await create(api, endpoint, { description: 'Workshop', data: { floor: 2 } });
        const r = await one(api, endpoint, id);
        assert.deepEqual(keys(r), recordKeys(PLACE_FIELDS, 'company'));
        assert.deepEqual({ ...r, company: null }, {
          id, company_id: top, description: 'Workshop', creationdate: nowText(svc), data: { floor: 2 }, modified: nowText(svc), company: null, version: 1,
        });
        assert.deepEqual(keys(r.company), COMPANY_FIELDS);
        assert.equal(r.company!.id, top);
        const inChild = await create(api, endpoint, { description: 'Annex', company_id: child });
        assert.equal((await one(api, endpoint, inChild)).company!.name, 'Child');
      });

      it(`${endpoint}: description is required and non-empty; creationdate is not writable`, async () => {
        const before = await countRows(svc, 'auditlog');
        for (const body of [{}, { description: '' }, { description: '   ' }, { description: null }, { description: 7 }]) {
          expectError(await api.put(`/3.0/${endpoint}`, body), 400, 'Field verification failed, invalid value for description');
        }
        expectError(await api.put(`/3.0/${endpoint}`, { description: 'x', creationdate: '2024-01-01 00:00:00' }), 400,
          'Field verification failed, invalid field creationdate');
        const id = await create(api, endpoint, { description: 'Keep' });
        expectError(await api.post(`/3.0/${endpoint}/id=${id}`, { description: '' }), 400, 'Field verification failed, invalid value for description');
        expectError(await api.post(`/3.0/${endpoint}/id=${id}`, { description: null }), 400, 'Field verification failed, invalid value for description');
        assert.equal((await one(api, endpoint, id)).description, 'Keep');
        assert.equal(await countRows(svc, 'auditlog'), before + 1);
      });

      it(`${endpoint}: a delete is refused while an asset or queue entry refers to it`, async () => {
        const column = endpoint === 'departments' ? 'department_id' : 'location_id';
        const used = await create(api, endpoint, { description: 'Used' });
        const asset = await create(api, 'assets', { asset_no: `${endpoint}-A`, [column]: used });
        expectError(await api.delete(`/3.0/${endpoint}/id=${used}`), 409, `Data Error: ${endpoint} record ${used} is still referenced by assets`);
        assert.equal((await one(api, endpoint, used)).id, used);
        await update(api, `assets/id=${asset}`, { [column]: null });
        const queued = await create(api, 'assetqueue', { description: 'q', [column]: used });
        expectError(await api.delete(`/3.0/${endpoint}/id=${used}`), 409, `Data Error: ${endpoint} record ${used} is still referenced by assetqueue`);
        assert.deepEqual(expectOk(await api.delete(`/3.0/assetqueue/id=${queued}`)), { records_deleted: 1, records_found: 1 });
        assert.deepEqual(expectOk(await api.delete(`/3.0/${endpoint}/id=${used}`)), { records_deleted: 1, records_found: 1 });
        assert.deepEqual(await list(api, `${endpoint}/id=${used}`), []);
      });
    }

    it('externaltypes: fields in order, no embeds', async () => {
      const id = await create(api, 'externaltypes', { description: 'Caliper', external_itemtype_id: '12' });
      const r = await one(api, 'externaltypes', id);
      assert.deepEqual(r, { id, external_itemtype_id: 12, company_id: top, description: 'Caliper', data: null, modified: nowText(svc), version: 1 });
      assert.deepEqual(keys(r), EXTERNALTYPE_FIELDS);
      expectError(await api.put('/3.0/externaltypes', { description: 'x', external_itemtype_id: 'twelve' }), 400,
        'Field verification failed, invalid value for external_itemtype_id');
    });

    it('externaltypes: external_itemtype_id is unique within a company', async () => {
      await create(api, 'externaltypes', { description: 'A', external_itemtype_id: 500 });
      const before = await countRows(svc, 'auditlog');
      expectDataError(await api.put('/3.0/externaltypes', { description: 'B', external_itemtype_id: 500 }));
      assert.equal(await countRows(svc, 'auditlog'), before);
      // Another company may use it; several types may have none.
      await create(api, 'externaltypes', { description: 'C', external_itemtype_id: 500, company_id: child });
      await create(api, 'externaltypes', { description: 'D', external_itemtype_id: null });
      await create(api, 'externaltypes', { description: 'E' });
      const f = await create(api, 'externaltypes', { description: 'F', external_itemtype_id: 501 });
      expectDataError(await api.post(`/3.0/externaltypes/id=${f}`, { external_itemtype_id: 500 }));
      assert.equal((await one(api, 'externaltypes', f)).external_itemtype_id, 501);
      assert.equal((await list(api, 'externaltypes/external_itemtype_id=500')).length, 2);
    });

    it('externaltypes: a delete is refused while an asset or queue entry refers to it', async () => {
      const used = await create(api, 'externaltypes', { description: 'Used type' });
      await create(api, 'assets', { asset_no: 'ET-A', external_type_id: used });
      expectError(await api.delete(`/3.0/externaltypes/id=${used}`), 409, `Data Error: externaltypes record ${used} is still referenced by assets`);
      const queuedOnly = await create(api, 'externaltypes', { description: 'Queued type' });
      await create(api, 'assetqueue', { description: 'q', external_type_id: queuedOnly });
      expectError(await api.delete(`/3.0/externaltypes/id=${queuedOnly}`), 409,
        `Data Error: externaltypes record ${queuedOnly} is still referenced by assetqueue`);
      // Nothing is deleted when one of the matched records is still referenced.
      const free = await create(api, 'externaltypes', { description: 'Free type' });
      expectDataError(await api.delete('/3.0/externaltypes/description~type'));
      assert.equal((await one(api, 'externaltypes', free)).id, free);
      assert.deepEqual(expectOk(await api.delete(`/3.0/externaltypes/id=${free}`)), { records_deleted: 1, records_found: 1 });
    });

    it('references to these records must be of the same company', async () => {
      const childDep = await create(api, 'departments', { description: 'Child dep', company_id: child });
      const childType = await create(api, 'externaltypes', { description: 'Child type', company_id: child });
      expectError(await api.put('/3.0/assetqueue', { description: 'q', department_id: childDep }), 400, 'Field verification failed, invalid value for department_id');
      expectError(await api.put('/3.0/assets', { asset_no: 'X', external_type_id: childType }), 400, 'Field verification failed, invalid value for external_type_id');
      await create(api, 'assetqueue', { description: 'q', department_id: childDep, external_type_id: childType, company_id: child });
    });
  });
}
