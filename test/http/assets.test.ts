// assets: shape and embeds, uniqueness, check dates,
// the approval refusal, what deleting an asset does to its files, reminders and
// queue entries, and `modified`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import {
  allNull, ASSET_FIELDS, auditOf, COMPANY_FIELDS, countRows, create, expectDataError, expectError, expectOk, EXTERNALTYPE_FIELDS,
  FILE_FIELDS, keys, list, nowText, one, PLACE_FIELDS, stop, todayText, update, recordKeys,
} from './resources-support.ts';

for (const kind of DB_KINDS) {
  describe(`assets (${kind})`, () => {
    let svc: Service;
    let top: number, child: number;
    let api: TestClient;

    before(async () => { ({ svc, top, child, api } = await buildTenancy(kind, { child: 'Child' })); });
    after(() => stop(svc));

    it('a new asset has the fields of an asset in order, its defaults and all-null/null embeds', async () => {
      const id = await create(api, 'assets', { asset_no: 'A-1' });
      const a = await one(api, 'assets', id);
      assert.deepEqual(keys(a), recordKeys(ASSET_FIELDS, 'company', 'location', 'department', 'externaltype', 'files'));
      assert.deepEqual({ ...a, company: null }, {
        id, company_id: top, asset_no: 'A-1', serial_no: '', description: '', status: 'Active', next_check: null, last_check: null, last_result: null,
        period: null, location_id: null, department_id: null, external_type_id: null, date_added: todayText(svc), data: null,
        modified: nowText(svc), company: null, location: null, department: null, externaltype: allNull(EXTERNALTYPE_FIELDS), files: [],
        version: 1,
      });
      assert.deepEqual(keys(a.company), COMPANY_FIELDS);
      assert.equal(a.company!.id, top);
      assert.equal(a.company!.name, 'Top');
    });

    it('embeds the location, department, external type and files of an asset', async () => {
      const loc = await create(api, 'locations', { description: 'Hall' });
      const dep = await create(api, 'departments', { description: 'Lab' });
      const ext = await create(api, 'externaltypes', { description: 'Scale', external_itemtype_id: 77 });
      const id = await create(api, 'assets', {
        asset_no: 'A-2', serial_no: 'S2', description: 'Balance', status: 'In use', next_check: '2025-03-01', last_check: '2024-03-01',
        period: 12, location_id: loc, department_id: dep, external_type_id: ext, data: { z: 1, a: [true, null] },
      });
      const file = await create(api, 'files', { asset_id: id, description: 'certificate' });
      const a = await one(api, 'assets', id);
      assert.deepEqual(keys(a.location), PLACE_FIELDS);
      assert.deepEqual([a.location!.id, a.location!.description, a.location!.company_id], [loc, 'Hall', top]);
      assert.deepEqual(keys(a.department), PLACE_FIELDS);
      assert.deepEqual([a.department!.id, a.department!.description], [dep, 'Lab']);
      assert.deepEqual(keys(a.externaltype), EXTERNALTYPE_FIELDS);
      assert.deepEqual([a.externaltype.id, a.externaltype.external_itemtype_id, a.externaltype.description], [ext, 77, 'Scale']);
      assert.equal(a.files.length, 1);
      assert.deepEqual(keys(a.files[0]), FILE_FIELDS);
      assert.deepEqual([a.files[0]!.id, a.files[0]!.asset_id, a.files[0]!.description], [file, id, 'certificate']);
      // Dynamic JSON comes back with its keys in the order written.
      assert.equal(JSON.stringify(a.data), '{"z":1,"a":[true,null]}');
      assert.deepEqual([a.next_check, a.last_check, a.period, a.status], ['2025-03-01', '2024-03-01', 12, 'In use']);
    });

    it('asset_no is required and unique within a company', async () => {
      expectError(await api.put('/3.0/assets', { description: 'no number' }), 400, 'Field verification failed, invalid value for asset_no');
      expectError(await api.put('/3.0/assets', { asset_no: '' }), 400, 'Field verification failed, invalid value for asset_no');
      expectError(await api.put('/3.0/assets', { asset_no: 5 }), 400, 'Field verification failed, invalid value for asset_no');
      await create(api, 'assets', { asset_no: 'U-1' });
      const before = await countRows(svc, 'assets');
      expectDataError(await api.put('/3.0/assets', { asset_no: 'U-1' }));
      // A batch with one duplicate inserts nothing.
      expectDataError(await api.put('/3.0/assets', [{ asset_no: 'U-2' }, { asset_no: 'U-2' }]));
      assert.equal(await countRows(svc, 'assets'), before);
      assert.deepEqual(await list(api, 'assets/asset_no=U-2'), []);
      // The same number in another company is fine.
      const other = await create(api, 'assets', { asset_no: 'U-1', company_id: child });
      assert.equal((await one(api, 'assets', other)).company_id, child);
      // Renaming onto a taken number is refused too.
      const u3 = await create(api, 'assets', { asset_no: 'U-3' });
      expectDataError(await api.post(`/3.0/assets/id=${u3}`, { asset_no: 'U-1' }));
      assert.equal((await one(api, 'assets', u3)).asset_no, 'U-3');
    });

    it('references must be records of the asset company', async () => {
      const childLoc = await create(api, 'locations', { description: 'Child hall', company_id: child });
      expectError(await api.put('/3.0/assets', { asset_no: 'R-1', location_id: childLoc }), 400, 'Field verification failed, invalid value for location_id');
      expectError(await api.put('/3.0/assets', { asset_no: 'R-1', department_id: 999999 }), 400, 'Field verification failed, invalid value for department_id');
      const id = await create(api, 'assets', { asset_no: 'R-1', company_id: child, location_id: childLoc });
      assert.equal((await one(api, 'assets', id)).location!.description, 'Child hall');
      expectError(await api.put('/3.0/assets', { asset_no: 'R-2', company_id: 999999 }), 400, 'Field verification failed, invalid value for company_id');
      expectError(await api.post(`/3.0/assets/id=${id}`, { company_id: top }), 400, 'Field verification failed, invalid field company_id');
    });

    it('POST last_check without next_check advances next_check by period months, day clamped', async () => {
      const id = await create(api, 'assets', { asset_no: 'C-1', period: 1, next_check: '2024-01-15' });
      assert.deepEqual(await update(api, `assets/id=${id}`, { last_check: '2024-01-31' }), { records_updated: 1, records_found: 1 });
      let a = await one(api, 'assets', id);
      assert.deepEqual([a.last_check, a.next_check], ['2024-01-31', '2024-02-29']);
      await update(api, `assets/id=${id}`, { last_check: '2024-01-31', period: 13 });
      a = await one(api, 'assets', id);
      assert.deepEqual([a.last_check, a.next_check, a.period], ['2024-01-31', '2025-02-28', 13]);
      // With next_check named, it wins.
      await update(api, `assets/id=${id}`, { last_check: '2024-06-30', next_check: '2024-07-01' });
      a = await one(api, 'assets', id);
      assert.deepEqual([a.last_check, a.next_check], ['2024-06-30', '2024-07-01']);
      // Without a period, next_check stays.
      const noPeriod = await create(api, 'assets', { asset_no: 'C-2', next_check: '2024-05-05' });
      await update(api, `assets/id=${noPeriod}`, { last_check: '2024-05-01' });
      a = await one(api, 'assets', noPeriod);
      assert.deepEqual([a.last_check, a.next_check], ['2024-05-01', '2024-05-05']);
      // On create as well.
      const created = await create(api, 'assets', { asset_no: 'C-3', period: 12, last_check: '2024-02-29' });
      assert.equal((await one(api, 'assets', created)).next_check, '2025-02-28');
    });

    it('a company with an approving system takes new assets only from that system', async () => {
      const manager = await svc.certificate(top);
      const managed = await create(api, 'companies', { name: 'Managed', data: { api_assetqueue_manager_id: manager.info.id } });
      const managedCert = await svc.certificate(managed);
      const before = await countRows(svc, 'assets');
      const refusal = `Data Error: company ${managed} adds assets through assetqueue`;
      expectError(await api.put('/3.0/assets', { asset_no: 'M-1', company_id: managed }), 409, refusal);
      expectError(await managedCert.client.put('/3.0/assets', { asset_no: 'M-1' }), 409, refusal);
      assert.equal(await countRows(svc, 'assets'), before);
      const id = await create(manager.client, 'assets', { asset_no: 'M-1', company_id: managed });
      assert.equal((await one(api, 'assets', id)).company_id, managed);
      // Children do not inherit the approving system.
      const below = await svc.company('Below managed', managed);
      await create(managedCert.client, 'assets', { asset_no: 'M-2', company_id: below });
      // Body errors come before the state refusal: no asset_no → 400, not 409.
      expectError(await api.put('/3.0/assets', { company_id: managed }), 400, 'Field verification failed, invalid value for asset_no');
      expectError(await managedCert.client.put('/3.0/assets', { description: 'no number' }), 400,
        'Field verification failed, invalid value for asset_no');
      expectError(await api.put('/3.0/assets', { asset_no: 'M-3', company_id: managed, period: 'x' }), 400,
        'Field verification failed, invalid value for period');
      assert.equal(await countRows(svc, 'assets'), before + 2);
    });

    it('a company of another tree that requires approval answers like one that does not exist', async () => {
      // Another tree: foreign → foreignManaged, whose approving system is a certificate of foreign.
      const foreign = await svc.company('Foreign');
      const foreignManager = await svc.certificate(foreign);
      const foreignManaged = await create(foreignManager.client, 'companies',
        { name: 'Foreign managed', data: { api_assetqueue_manager_id: foreignManager.info.id } });
      const foreignPlain = await svc.company('Foreign plain', foreign);
      const before = await countRows(svc, 'assets');
      const badCompany = 'Field verification failed, invalid value for company_id';
      for (const company of [foreignManaged, foreignPlain, 999999]) {
        expectError(await api.put('/3.0/assets', { asset_no: 'x', company_id: company }), 400, badCompany);
        expectError(await api.put('/3.0/assets', [{ asset_no: 'x2' }, { asset_no: 'x', company_id: company }]), 400, badCompany);
      }
      assert.equal(await countRows(svc, 'assets'), before);
      // Its approving system still adds assets there.
      await create(foreignManager.client, 'assets', { asset_no: 'x', company_id: foreignManaged });
    });

    it('an asset with files cannot be deleted; its reminders go with it', async () => {
      const withFile = await create(api, 'assets', { asset_no: 'D-1' });
      const file = await create(api, 'files', { asset_id: withFile });
      expectError(await api.delete(`/3.0/assets/id=${withFile}`), 409, `Data Error: assets record ${withFile} is still referenced by files`);
      assert.equal((await one(api, 'assets', withFile)).files.length, 1);
      assert.deepEqual(expectOk(await api.delete(`/3.0/files/id=${file}`)), { records_deleted: 1, records_found: 1 });
      assert.deepEqual(expectOk(await api.delete(`/3.0/assets/id=${withFile}`)), { records_deleted: 1, records_found: 1 });

      const withReminders = await create(api, 'assets', { asset_no: 'D-2', next_check: '2024-09-01' });
      const r1 = await create(api, 'assetreminders', { asset_id: withReminders, due_date: '2024-09-01', remind_date: '2024-08-02' });
      const r2 = await create(api, 'assetreminders', { asset_id: withReminders, due_date: '2025-09-01', remind_date: '2025-08-02' });
      assert.deepEqual(expectOk(await api.delete(`/3.0/assets/id=${withReminders}`)), { records_deleted: 1, records_found: 1 });
      assert.deepEqual(await list(api, `assetreminders/asset_id=${withReminders}`), []);
      assert.deepEqual(await list(api, `assets/id=${withReminders}`), []);
      for (const r of [r1, r2]) {
        const log = await auditOf(api, 'assetreminders', r);
        assert.deepEqual(log.map((e) => e.action), ['create', 'delete']);
      }
    });

    it("deleting an asset sets its queue entry's asset_id to null", async () => {
      const entry = await create(api, 'assetqueue', { asset_no: 'Q-1', description: 'queued' });
      await update(api, `assetqueue/id=${entry}`, { released: 1 });
      const assetId = (await one(api, 'assetqueue', entry)).asset_id;
      assert.equal(typeof assetId, 'number');
      assert.deepEqual(expectOk(await api.delete(`/3.0/assets/id=${assetId}`)), { records_deleted: 1, records_found: 1 });
      const q = await one(api, 'assetqueue', entry);
      assert.deepEqual([q.asset_id, q.released], [null, 1]);
      const log = await auditOf(api, 'assetqueue', entry);
      const last = log[log.length - 1]!;
      assert.deepEqual([last.action, last.olddata, last.newdata], ['update', { asset_id: assetId }, { asset_id: null }]);
    });

    it('modified changes on every change, and only then', async () => {
      const id = await create(api, 'assets', { asset_no: 'T-1' });
      const first = nowText(svc);
      assert.equal((await one(api, 'assets', id)).modified, first);
      svc.clock.advance(61_000);
      assert.deepEqual(await update(api, `assets/id=${id}`, { description: 'same' }), { records_updated: 1, records_found: 1 });
      const second = nowText(svc);
      assert.notEqual(second, first);
      assert.equal((await one(api, 'assets', id)).modified, second);
      svc.clock.advance(61_000);
      // Equal values: no change, no new modified.
      assert.deepEqual(await update(api, `assets/id=${id}`, { description: 'same' }), { records_updated: 0, records_found: 1 });
      assert.equal((await one(api, 'assets', id)).modified, second);
      await update(api, `assets/id=${id}`, { data: { k: 1 } });
      const third = (await one(api, 'assets', id)).modified;
      assert.equal(third, nowText(svc));
      // Filters see it: what changed since the second change.
      assert.deepEqual((await list(api, `assets/id=${id}/modified>${second.replace(' ', '+')}`)).map((a) => a.id), [id]);
      expectError(await api.post(`/3.0/assets/id=${id}`, { modified: '2020-01-01 00:00:00' }), 400, 'Field verification failed, invalid field modified');
      expectError(await api.post(`/3.0/assets/id=${id}`, { date_added: '2020-01-01' }), 400, 'Field verification failed, invalid field date_added');
    });
  });
}
