// assetqueue: shape, creation defaults, the released
// transitions, who may make them, and the asset a release creates or links.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { login, user } from '../support/workflows.ts';
import {
  allNull, auditOf, COMPANY_FIELDS, countRows, create, expectDataError, expectError, expectOk, EXTERNALTYPE_FIELDS, keys, list, nowText,
  one, PLACE_FIELDS, QUEUE_FIELDS, start, stop, todayText, update, recordKeys,
} from './resources-support.ts';

const badReleased = 'Field verification failed, invalid field released';
const badAssetId = 'Field verification failed, invalid value for asset_id';
const transition = (id: number, a: number, b: number) => `Data Error: assetqueue record ${id} cannot go from released=${a} to released=${b}`;

for (const kind of DB_KINDS) {
  describe(`assetqueue (${kind})`, () => {
    let svc: Service;
    let top: number, plain: number, managed: number;
    let api: TestClient; // basic certificate of `top`
    let manager: TestClient; // the approving system of `managed`
    let managedApi: TestClient; // another certificate of `managed`, not its approving system

    before(async () => {
      svc = await start(kind);
      top = await svc.company('Top');
      plain = await svc.company('Plain', top);
      api = (await svc.certificate(top)).client;
      const m = await svc.certificate(top);
      manager = m.client;
      managed = await create(api, 'companies', { name: 'Managed', data: { api_assetqueue_manager_id: m.info.id } });
      managedApi = (await svc.certificate(managed)).client;
    });
    after(() => stop(svc));

    const entry = (client: TestClient, body: Record<string, unknown>) => create(client, 'assetqueue', { description: 'queued', ...body });
    const released = async (id: number) => (await one(api, 'assetqueue', id)).released;

    it('fields in the seed order plus asset_id and modified, with the creation defaults', async () => {
      const id = await entry(api, { asset_no: 'Q-1' });
      const q = await one(api, 'assetqueue', id);
      assert.deepEqual(keys(q), recordKeys(QUEUE_FIELDS, 'company', 'externaltype', 'department', 'location'));
      assert.deepEqual({ ...q, company: null }, {
        id, company_id: top, external_type_id: null, manufacturer: '', model: '', asset_no: 'Q-1', serial_no: '', description: 'queued',
        next_date: null, period: null, status: 'Active', date_added: todayText(svc), department_id: null, location_id: null, last_error: '',
        requested_date: nowText(svc), released: 0, data: null, asset_id: null, modified: nowText(svc),
        company: null, externaltype: allNull(EXTERNALTYPE_FIELDS), department: null, location: null, version: 1,
      });
      assert.deepEqual(keys(q.company), COMPANY_FIELDS);
      assert.equal(q.company!.id, top);
    });

    it('embeds its external type, department and location', async () => {
      const ext = await create(api, 'externaltypes', { description: 'Pipette', external_itemtype_id: 5 });
      const dep = await create(api, 'departments', { description: 'QA' });
      const loc = await create(api, 'locations', { description: 'Store' });
      const id = await entry(api, { external_type_id: ext, department_id: dep, location_id: loc });
      const q = await one(api, 'assetqueue', id);
      assert.deepEqual(keys(q.externaltype), EXTERNALTYPE_FIELDS);
      assert.deepEqual(keys(q.department), PLACE_FIELDS);
      assert.deepEqual(keys(q.location), PLACE_FIELDS);
      assert.deepEqual([q.externaltype.id, q.department!.id, q.location!.id], [ext, dep, loc]);
    });

    it('description is required; released, asset_id and the creation dates cannot be sent with PUT', async () => {
      expectError(await api.put('/3.0/assetqueue', { asset_no: 'x' }), 400, 'Field verification failed, invalid value for description');
      for (const [field, value] of [['released', 1], ['released', 0], ['asset_id', 1], ['requested_date', '2024-01-01 00:00:00'],
        ['date_added', '2024-01-01'], ['modified', '2024-01-01 00:00:00']] as const) {
        expectError(await api.put('/3.0/assetqueue', { description: 'x', [field]: value }), 400, `Field verification failed, invalid field ${field}`);
      }
      expectError(await api.put('/3.0/assetqueue', { description: 'x', status: 'Active', manufacturer: 'ACME', external_type_id: 999999 }), 400,
        'Field verification failed, invalid value for external_type_id');
    });

    it('allows 0→1, 0→2 and 2→0; anything else → 409', async () => {
      const a = await entry(api, { asset_no: 'T-1' });
      assert.deepEqual(await update(api, `assetqueue/id=${a}`, { released: 2 }), { records_updated: 1, records_found: 1 });
      expectError(await api.post(`/3.0/assetqueue/id=${a}`, { released: 1 }), 409, transition(a, 2, 1));
      assert.equal(await released(a), 2);
      assert.deepEqual(await update(api, `assetqueue/id=${a}`, { released: 0 }), { records_updated: 1, records_found: 1 });
      assert.deepEqual(await update(api, `assetqueue/id=${a}`, { released: 1 }), { records_updated: 1, records_found: 1 });
      expectError(await api.post(`/3.0/assetqueue/id=${a}`, { released: 0 }), 409, transition(a, 1, 0));
      expectError(await api.post(`/3.0/assetqueue/id=${a}`, { released: 2 }), 409, transition(a, 1, 2));
      assert.equal(await released(a), 1);
      const b = await entry(api, { asset_no: 'T-2' });
      expectError(await api.post(`/3.0/assetqueue/id=${b}`, { released: 3 }), 409, transition(b, 0, 3));
      assert.equal(await released(b), 0);
      // The same value is no transition.
      assert.deepEqual(await update(api, `assetqueue/id=${b}`, { released: 0 }), { records_updated: 0, records_found: 1 });
    });

    it('only the approving system changes released in a company that has one', async () => {
      const id = await entry(managedApi, { asset_no: 'AP-1' });
      // `released` is not writable for them: a field refusal, not a state one.
      for (const client of [api, managedApi]) {
        for (const body of [{ released: 1 }, { released: 2 }, { released: 1, serial_no: 'x' }]) {
          expectError(await client.post(`/3.0/assetqueue/id=${id}`, body), 400, badReleased);
        }
      }
      assert.equal(await released(id), 0);
      assert.equal((await one(api, 'assetqueue', id)).serial_no, '');
      // Anyone in scope may still change the other fields of a waiting entry.
      assert.deepEqual(await update(managedApi, `assetqueue/id=${id}`, { serial_no: 'SN' }), { records_updated: 1, records_found: 1 });
      assert.deepEqual(await update(manager, `assetqueue/id=${id}`, { released: 2, last_error: 'duplicate' }), { records_updated: 1, records_found: 1 });
      const q = await one(api, 'assetqueue', id);
      assert.deepEqual([q.released, q.last_error], [2, 'duplicate']);
    });

    it('in a company without one, any basic-mode certificate of the scope may release', async () => {
      const plainApi = (await svc.certificate(plain)).client;
      const a = await entry(plainApi, { asset_no: 'P-1' });
      const b = await entry(plainApi, { asset_no: 'P-2' });
      await update(api, `assetqueue/id=${a}`, { released: 2 }); // certificate of the parent
      await update(plainApi, `assetqueue/id=${b}`, { released: 2 }); // certificate of the company itself
      assert.deepEqual([await released(a), await released(b)], [2, 2]);
    });

    it('0→1 creates the asset in the same transaction with the mapped fields and links it', async () => {
      const ext = await create(api, 'externaltypes', { description: 'Gauge', external_itemtype_id: 9 });
      const dep = await create(api, 'departments', { description: 'Metrology' });
      const loc = await create(api, 'locations', { description: 'Bench' });
      const id = await entry(api, {
        asset_no: 'REL-1', serial_no: 'SN-1', description: 'Torque wrench', status: 'New', next_date: '2025-01-31', period: 6,
        manufacturer: 'ACME', model: 'TW-9', external_type_id: ext, department_id: dep, location_id: loc, data: { cost: 12, tag: 'x' },
      });
      const assetsBefore = await countRows(svc, 'assets');
      svc.clock.advance(5000);
      assert.deepEqual(await update(api, `assetqueue/id=${id}`, { released: 1 }), { records_updated: 1, records_found: 1 });
      assert.equal(await countRows(svc, 'assets'), assetsBefore + 1);
      const q = await one(api, 'assetqueue', id);
      assert.equal(q.released, 1);
      assert.equal(typeof q.asset_id, 'number');
      assert.equal(q.modified, nowText(svc));
      const a = await one(api, 'assets', q.asset_id!);
      assert.deepEqual({ ...a, company: null, location: null, department: null, externaltype: null }, {
        id: q.asset_id, company_id: top, asset_no: 'REL-1', serial_no: 'SN-1', description: 'Torque wrench', status: 'New',
        next_check: '2025-01-31', last_check: null, last_result: null, period: 6, location_id: loc, department_id: dep, external_type_id: ext,
        date_added: todayText(svc), data: { cost: 12, tag: 'x', manufacturer: 'ACME', model: 'TW-9' }, modified: nowText(svc),
        company: null, location: null, department: null, externaltype: null, files: [], version: 1,
      });
      assert.equal(JSON.stringify(a.data), '{"cost":12,"tag":"x","manufacturer":"ACME","model":"TW-9"}');
      // Both changes are audited.
      const log = await auditOf(api, 'assetqueue', id);
      assert.deepEqual(log.map((e) => e.action), ['create', 'update']);
      assert.deepEqual(log[1]!.olddata, { released: 0, asset_id: null });
      assert.deepEqual(log[1]!.newdata, { released: 1, asset_id: q.asset_id });
      assert.deepEqual((await auditOf(api, 'assets', q.asset_id!)).map((e) => e.action), ['create']);
    });

    it('the approving system releases into a managed company, and may link its own asset instead', async () => {
      const created = await entry(managedApi, { asset_no: 'MR-1', manufacturer: 'M', model: 'X' });
      await update(manager, `assetqueue/id=${created}`, { released: 1 });
      const q = await one(api, 'assetqueue', created);
      assert.equal((await one(api, 'assets', q.asset_id!)).company_id, managed);

      const linked = await entry(managedApi, { asset_no: 'MR-2' });
      const own = await create(manager, 'assets', { asset_no: 'MR-2', company_id: managed });
      const assetsBefore = await countRows(svc, 'assets');
      assert.deepEqual(await update(manager, `assetqueue/id=${linked}`, { released: 1, asset_id: own }), { records_updated: 1, records_found: 1 });
      assert.equal(await countRows(svc, 'assets'), assetsBefore);
      const l = await one(api, 'assetqueue', linked);
      assert.deepEqual([l.released, l.asset_id], [1, own]);
    });

    it('linking needs an asset of the entry company, and asset_id is not otherwise writable', async () => {
      const id = await entry(api, { asset_no: 'L-1' });
      const elsewhere = await create(api, 'assets', { asset_no: 'L-1', company_id: plain });
      expectError(await api.post(`/3.0/assetqueue/id=${id}`, { released: 1, asset_id: elsewhere }), 400, badAssetId);
      expectError(await api.post(`/3.0/assetqueue/id=${id}`, { released: 1, asset_id: 999999 }), 400, badAssetId);
      const mine = await create(api, 'assets', { asset_no: 'L-1x' });
      expectError(await api.post(`/3.0/assetqueue/id=${id}`, { asset_id: mine }), 400, badAssetId);
      expectError(await api.post(`/3.0/assetqueue/id=${id}`, { released: 2, asset_id: mine }), 400, badAssetId);
      const q = await one(api, 'assetqueue', id);
      assert.deepEqual([q.released, q.asset_id], [0, null]);
    });

    it('asset_id without a release is refused before anything is matched', async () => {
      const mine = await create(api, 'assets', { asset_no: 'L-2' });
      expectError(await api.post('/3.0/assetqueue/id=999999', { asset_id: mine }), 400, badAssetId);
      expectError(await api.post('/3.0/assetqueue/id=999999', { asset_id: null }), 400, badAssetId);
      expectError(await api.post('/3.0/assetqueue/id=999999', { released: 2, asset_id: mine }), 400, badAssetId);
      expectError(await manager.post('/3.0/assetqueue/asset_no=nothing-has-this', { asset_id: mine }), 400, badAssetId);
      // With a release and nothing matched: nothing to do.
      assert.deepEqual(await update(api, 'assetqueue/id=999999', { released: 1, asset_id: mine }), { records_updated: 0, records_found: 0 });
    });

    it('a session never sets released: 400 invalid field, before anything is matched', async () => {
      const { client } = await svc.certificate(top, { impersonation: true });
      const admin = await user(svc, top, { level: 'admin', canCreateCompanies: true });
      const headers = await login(client, admin);
      const waiting = await entry(api, { asset_no: 'S-1' }); // a company without an approving system
      const managedEntry = await entry(managedApi, { asset_no: 'S-2' });
      for (const path of [`assetqueue/id=${waiting}`, `assetqueue/id=${managedEntry}`, 'assetqueue/id=999999', 'assetqueue/asset_no~S-']) {
        for (const body of [{ released: 1 }, { released: 2 }, { released: 0 }, { released: 2, last_error: 'x' }]) {
          expectError(await client.post(`/3.0/${path}`, body, { headers }), 400, badReleased);
        }
      }
      for (const id of [waiting, managedEntry]) {
        const q = await one(api, 'assetqueue', id);
        assert.deepEqual([q.released, q.asset_id, q.last_error], [0, null, '']);
      }
      // The other fields stay open to the admin session.
      assert.deepEqual(expectOk(await client.post(`/3.0/assetqueue/id=${waiting}`, { serial_no: 'S' }, { headers })),
        { records_updated: 1, records_found: 1 });
    });

    it('a released entry is read-only except last_error and data', async () => {
      const id = await entry(api, { asset_no: 'RO-1' });
      await update(api, `assetqueue/id=${id}`, { released: 1 });
      for (const body of [{ description: 'changed' }, { asset_no: 'RO-2' }, { status: 'Gone' }, { next_date: '2030-01-01' }]) {
        expectDataError(await api.post(`/3.0/assetqueue/id=${id}`, body));
      }
      assert.equal((await one(api, 'assetqueue', id)).description, 'queued');
      assert.deepEqual(await update(api, `assetqueue/id=${id}`, { last_error: 'synced late' }), { records_updated: 1, records_found: 1 });
      assert.deepEqual(await update(api, `assetqueue/id=${id}`, { data: { synced: true } }), { records_updated: 1, records_found: 1 });
      const q = await one(api, 'assetqueue', id);
      assert.deepEqual([q.last_error, q.data, q.released], ['synced late', { synced: true }, 1]);
    });

    it('a release whose asset_no is taken → 409, and nothing changes', async () => {
      await create(api, 'assets', { asset_no: 'DUP-1' });
      const ok = await entry(api, { asset_no: 'DUP-OK' });
      const dup = await entry(api, { asset_no: 'DUP-1' });
      const counts = [await countRows(svc, 'assets'), await countRows(svc, 'auditlog')];
      // Two entries in one request: the good one is not released either.
      expectDataError(await api.post(`/3.0/assetqueue/asset_no~DUP`, { released: 1 }));
      assert.deepEqual([await countRows(svc, 'assets'), await countRows(svc, 'auditlog')], counts);
      for (const id of [ok, dup]) {
        const q = await one(api, 'assetqueue', id);
        assert.deepEqual([q.released, q.asset_id], [0, null]);
      }
      assert.deepEqual(await list(api, 'assets/asset_no=DUP-OK'), []);
    });

    it('deleting a queue entry leaves its asset alone', async () => {
      const id = await entry(api, { asset_no: 'DEL-1' });
      await update(api, `assetqueue/id=${id}`, { released: 1 });
      const assetId = (await one(api, 'assetqueue', id)).asset_id!;
      assert.deepEqual(expectOk(await api.delete(`/3.0/assetqueue/id=${id}`)), { records_deleted: 1, records_found: 1 });
      assert.equal((await one(api, 'assets', assetId)).asset_no, 'DEL-1');
    });
  });
}
