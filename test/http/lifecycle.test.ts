// Extensions of an asset's life: `metadata` describes the custom
// keys of the caller's scope, `moveasset` moves an asset with its files and
// reminders to another company in scope.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { login, runAt, uniqueName, user } from '../support/workflows.ts';
import {
  allNull, ASSET_FIELDS, create, expectDataError, expectError, expectOk, EXTERNALTYPE_FIELDS, FILE_FIELDS, keys, list, nowText, one, start,
  stop, recordKeys,
} from './resources-support.ts';
import type { Asset } from '../support/api.ts';

const INVALID = (f: string) => `Field verification failed, invalid value for ${f}`;
const NEEDS_CREATOR = 'Access denied: POST on moveasset requires admin with can_create_companies';

interface KeyInfo { display_name: string; type: string; visible: boolean; constraints?: unknown; options?: unknown }

for (const kind of DB_KINDS) {
  describe(`metadata (${kind})`, () => {
    let svc: Service;
    let a: number, a1: number, b: number;
    let apiA: TestClient, apiA1: TestClient, apiB: TestClient;
    const clientOf = async (c: number) => (await svc.certificate(c)).client;

    before(async () => {
      svc = await start(kind);
      a = await svc.company('Meta A');
      a1 = await svc.company('Meta A1', a);
      b = await svc.company('Meta B');
      apiA = await clientOf(a);
      apiA1 = await clientOf(a1);
      apiB = await clientOf(b);
      expectOk(await apiA.post(`/3.0/companies/id=${a}`, { data: { custom_fields: {
        assets: { costcode: { display_name: 'Cost code', type: 'options', options: ['P-10', 'P-11'], constraints: { required: true } } },
        locations: { floor: { display_name: 'Floor', constraints: { min: 0, max: 40 } } },
      } } }));
      expectOk(await apiB.post(`/3.0/companies/id=${b}`, { data: { custom_fields: { assets: { costcode: { display_name: 'B code' } } } } }));
      await create(apiA, 'assets', { asset_no: 'M1', data: { costcode: 'P-10', count: 3, calibrated: true, since: '2024-01-05',
        at: '2024-01-05 10:00:00', $sync: 'abc', mixed: 1, ratio: 2 } });
      await create(apiA, 'assets', { asset_no: 'M2', data: { costcode: 'P-11', count: 5, calibrated: false, since: '2023-12-31',
        at: '2023-12-31 23:59:59', $sync: 'def', mixed: 'one', ratio: 7 } });
      await create(apiA, 'assets', { asset_no: 'M3', data: null });
      await create(apiA1, 'assets', { asset_no: 'C1', data: { childkey: 'c', $childhidden: 1 } });
      await create(apiA, 'locations', { description: 'Hall', data: { floor: 2 } });
      await create(apiB, 'assets', { asset_no: 'B1', data: { secret_b: 'x', costcode: 7 } });
      await create(apiB, 'departments', { description: 'B dept', data: { b_only: true } });
    });
    after(() => stop(svc));

    async function metadata(api: TestClient, headers: Record<string, string> = {}): Promise<Record<string, Record<string, KeyInfo>>> {
      const res = await api.get('/3.0/metadata', { headers });
      const response = expectOk<Record<string, Record<string, KeyInfo>>[]>(res);
      assert.ok(Array.isArray(response) && response.length === 1, res.text);
      return response[0]!;
    }

    it('describes the keys seen in each endpoint\'s data, with inferred types, visibility and the company\'s declarations', async () => {
      const m = await metadata(apiA);
      for (const endpoint of ['assets', 'locations', 'departments', 'companies', 'files', 'users', 'messages']) {
        assert.ok(endpoint in m, `${endpoint} is described`);
      }
      const assets = m.assets!;
      assert.deepEqual(assets.costcode, { display_name: 'Cost code', type: 'options', visible: true, constraints: { required: true },
        options: ['P-10', 'P-11'] });
      assert.deepEqual(assets.count, { display_name: 'count', type: 'int', visible: true });
      assert.deepEqual(assets.calibrated, { display_name: 'calibrated', type: 'bool', visible: true });
      assert.deepEqual(assets.since, { display_name: 'since', type: 'date', visible: true });
      assert.deepEqual(assets.at, { display_name: 'at', type: 'datetime', visible: true });
      assert.deepEqual(assets.mixed, { display_name: 'mixed', type: 'string', visible: true });
      assert.deepEqual(assets.$sync, { display_name: '$sync', type: 'string', visible: false });
      // A child company's keys are in the scope.
      assert.deepEqual(assets.childkey, { display_name: 'childkey', type: 'string', visible: true });
      assert.equal(assets.$childhidden?.visible, false);
      assert.deepEqual(m.locations!.floor, { display_name: 'Floor', type: 'int', visible: true, constraints: { min: 0, max: 40 } });
    });

    it('never shows another company\'s keys or declarations; a child sees neither its parent\'s keys nor its declarations', async () => {
      const ofA = await metadata(apiA);
      const text = JSON.stringify(ofA);
      for (const foreign of ['secret_b', 'b_only', 'B code']) assert.ok(!text.includes(foreign), `${foreign} is B's`);
      const ofB = await metadata(apiB);
      assert.deepEqual(ofB.assets, {
        costcode: { display_name: 'B code', type: 'int', visible: true },
        secret_b: { display_name: 'secret_b', type: 'string', visible: true },
      });
      assert.deepEqual(ofB.departments, { b_only: { display_name: 'b_only', type: 'bool', visible: true } });
      for (const mine of ['childkey', 'calibrated', 'Cost code', 'floor']) assert.ok(!JSON.stringify(ofB).includes(mine), mine);
      const ofA1 = await metadata(apiA1);
      assert.deepEqual(ofA1.assets, {
        $childhidden: { display_name: '$childhidden', type: 'int', visible: false },
        childkey: { display_name: 'childkey', type: 'string', visible: true },
      });
      assert.deepEqual(ofA1.locations, {});
    });

    it('a value that only looks like a date in some records is a string; a number in one company does not retype another\'s', async () => {
      const c = await svc.company(uniqueName('Meta C'));
      const api = (await svc.certificate(c)).client;
      await create(api, 'assets', { asset_no: 'X1', data: { when: '2024-01-05', code: 'A-1' } });
      await create(api, 'assets', { asset_no: 'X2', data: { when: 'next-tu-es', code: 'A-2' } });
      const m = await metadata(api);
      assert.equal(m.assets!.when!.type, 'string');
      // B stores costcode as a number; A's costcode is still what A declared.
      assert.equal((await metadata(apiA)).assets!.costcode!.type, 'options');
      assert.deepEqual(Object.keys(m.assets!).sort(), ['code', 'when']);
    });

    it('a session sees the metadata of its user\'s scope; filters are refused', async () => {
      const { client } = await svc.certificate(a1, { impersonation: true });
      const reader = await user(svc, a1, { level: 'readonly' });
      const m = await metadata(client, await login(client, reader));
      assert.deepEqual(Object.keys(m.assets!).sort(), ['$childhidden', 'childkey']);
      expectError(await apiA.get('/3.0/metadata/id=1'), 400, 'Invalid filter definition: id=1');
    });
  });

  describe(`moveasset (${kind})`, () => {
    let svc: Service;
    let root: number, c1: number, c2: number, other: number;
    let api: TestClient, apiC1: TestClient, apiC2: TestClient, apiOther: TestClient;

    before(async () => {
      svc = await start(kind);
      root = await svc.company('Move root');
      c1 = await svc.company('Move C1', root);
      c2 = await svc.company('Move C2', root);
      other = await svc.company('Move other');
      const clientOf = async (c: number) => (await svc.certificate(c)).client;
      api = await clientOf(root);
      apiC1 = await clientOf(c1);
      apiC2 = await clientOf(c2);
      apiOther = await clientOf(other);
    });
    after(() => stop(svc));

    /** An asset of C1 with a location, department and external type of C1, a file and a reminder. */
    async function populated(assetNo = uniqueName('MV')) {
      const location = await create(apiC1, 'locations', { description: 'C1 hall' });
      const department = await create(apiC1, 'departments', { description: 'C1 lab' });
      const externalType = await create(apiC1, 'externaltypes', { description: 'C1 type', external_itemtype_id: Math.floor(Math.random() * 1e6) });
      const id = await create(apiC1, 'assets', { asset_no: assetNo, serial_no: 'S-1', description: 'Balance', status: 'In use',
        next_check: '2031-03-20', period: 12, location_id: location, department_id: department, external_type_id: externalType, data: { k: 'v' } });
      const file = await create(apiC1, 'files', { asset_id: id, description: 'certificate' });
      const reminder = await create(apiC1, 'assetreminders', { asset_id: id, due_date: '2031-03-20', remind_date: '2031-02-18', message: 'soon' });
      return { id, file, reminder, location, department, externalType, assetNo };
    }

    const move = (client: TestClient, body: unknown, headers: Record<string, string> = {}) => client.post('/3.0/moveasset', body, { headers });

    it('moves the asset with its files and reminders, clears the old company\'s references, answers [<the moved asset>]', async () => {
      const p = await populated();
      const before = await one(api, 'assets', p.id);
      const res = await move(api, { asset_id: p.id, company_id: c2 });
      const response = expectOk<Asset[]>(res);
      assert.ok(Array.isArray(response) && response.length === 1, res.text);
      const moved = response[0];
      assert.deepEqual(keys(moved), recordKeys(ASSET_FIELDS, 'company', 'location', 'department', 'externaltype', 'files'));
      assert.deepEqual(moved, await one(api, 'assets', p.id), 'the full asset shape, as GET shows it');
      assert.deepEqual([moved.company_id, moved.location_id, moved.department_id, moved.external_type_id], [c2, null, null, null]);
      assert.deepEqual([moved.location, moved.department, moved.externaltype], [null, null, allNull(EXTERNALTYPE_FIELDS)]);
      assert.equal(moved.company!.id, c2);
      // Everything else of the asset is as it was.
      for (const f of ['asset_no', 'serial_no', 'description', 'status', 'next_check', 'period', 'date_added', 'data'] as const) assert.deepEqual(moved[f], before[f], f);
      assert.deepEqual(moved.files.map((f) => [f.id, f.company_id]), [[p.file, c2]]);
      assert.deepEqual(keys(moved.files[0]), FILE_FIELDS);
      assert.equal((await one(api, 'assetreminders', p.reminder)).company_id, c2);
      assert.equal((await one(api, 'files', p.file)).company_id, c2);
      // C1 no longer sees it; C2 does.
      assert.deepEqual(await list(apiC1, `assets/id=${p.id}`), []);
      assert.deepEqual(await list(apiC1, `files/id=${p.file}`), []);
      assert.deepEqual(await list(apiC1, `assetreminders/id=${p.reminder}`), []);
      assert.equal((await one(apiC2, 'assets', p.id)).asset_no, p.assetNo);
      // C1's location, department and external type stay where they were.
      assert.equal((await one(apiC1, 'locations', p.location)).company_id, c1);
    });

    it('is audited: the asset, its files and its reminders each get an update entry', async () => {
      const p = await populated();
      expectOk<Asset[]>(await move(api, { asset_id: p.id, company_id: c2 }));
      const assetEntries = await list(api, `auditlog/endpoint=assets/record_id=${p.id}/action=update`);
      assert.equal(assetEntries.length, 1);
      assert.deepEqual(assetEntries[0]!.olddata, { company_id: c1, location_id: p.location, department_id: p.department, external_type_id: p.externalType });
      assert.deepEqual(assetEntries[0]!.newdata, { company_id: c2, location_id: null, department_id: null, external_type_id: null });
      const fileEntries = await list(api, `auditlog/endpoint=files/record_id=${p.file}/action=update`);
      assert.deepEqual(fileEntries.map((e: { olddata: unknown; newdata: unknown }) => [e.olddata, e.newdata]), [[{ company_id: c1 }, { company_id: c2 }]]);
      const reminderEntries = await list(api, `auditlog/endpoint=assetreminders/record_id=${p.reminder}/action=update`);
      assert.deepEqual(reminderEntries.map((e: { olddata: unknown; newdata: unknown }) => [e.olddata, e.newdata]), [[{ company_id: c1 }, { company_id: c2 }]]);
    });

    it('clears asset_id of a released queue entry that links the asset; the entry stays in its company (audited)', async () => {
      const entry = await create(apiC1, 'assetqueue', { asset_no: uniqueName('QM'), description: 'queued in C1' });
      expectOk(await apiC1.post(`/3.0/assetqueue/id=${entry}`, { released: 1 }));
      const assetId = (await one(apiC1, 'assetqueue', entry)).asset_id!;
      assert.equal(typeof assetId, 'number');
      const waiting = await create(apiC1, 'assetqueue', { asset_no: uniqueName('QW'), description: 'still waiting' });
      svc.clock.advance(2000);
      const moved = expectOk<Asset[]>(await move(api, { asset_id: assetId, company_id: c2 }));
      assert.equal(moved[0]!.company_id, c2);
      const q = await one(api, 'assetqueue', entry);
      assert.deepEqual([q.company_id, q.released, q.asset_id], [c1, 1, null]);
      assert.equal(q.modified, nowText(svc));
      assert.equal((await one(apiC1, 'assetqueue', entry)).asset_id, null);
      assert.deepEqual(await list(apiC2, `assetqueue/id=${entry}`), []);
      // Nothing links to the moved asset any more, and other entries are untouched.
      assert.deepEqual(await list(api, `assetqueue/asset_id=${assetId}`), []);
      const w = await one(api, 'assetqueue', waiting);
      assert.deepEqual([w.company_id, w.released, w.asset_id], [c1, 0, null]);
      const log = await list(api, `auditlog/endpoint=assetqueue/record_id=${entry}`);
      assert.deepEqual(log.map((e: { action: string }) => e.action), ['create', 'update', 'update']);
      const last = log[2]!;
      assert.deepEqual([last.olddata, last.newdata, last.company_id], [{ asset_id: assetId }, { asset_id: null }, c1]);
      assert.deepEqual(await list(api, `auditlog/endpoint=assetqueue/record_id=${waiting}/action=update`), []);
    });

    it('moves up to the parent and back down; moving to its own company changes nothing', async () => {
      const p = await populated();
      expectOk<Asset[]>(await move(api, { asset_id: p.id, company_id: root }));
      assert.equal((await one(api, 'assets', p.id)).company_id, root);
      const again = expectOk<Asset[]>(await move(api, { asset_id: p.id, company_id: root }));
      assert.equal(again[0]!.company_id, root);
      assert.equal((await list(api, `auditlog/endpoint=assets/record_id=${p.id}/action=update`)).length, 1);
      expectOk<Asset[]>(await move(api, { asset_id: p.id, company_id: c1 }));
      assert.equal((await one(apiC1, 'assets', p.id)).company_id, c1);
      // The reminder run files its reminders under C1 again.
      await runAt(svc, '2031-03-10T12:00:00Z');
      assert.ok((await list(apiC1, `assetreminders/asset_id=${p.id}`)).every((r: { company_id: number }) => r.company_id === c1));
    });

    it('a target outside the scope, an unknown company or an unknown/foreign asset → 400 invalid value; nothing moves', async () => {
      const p = await populated();
      const foreign = await create(apiOther, 'assets', { asset_no: uniqueName('OT') });
      expectError(await move(api, { asset_id: p.id, company_id: other }), 400, INVALID('company_id'));
      expectError(await move(api, { asset_id: p.id, company_id: 987654 }), 400, INVALID('company_id'));
      expectError(await move(apiC1, { asset_id: p.id, company_id: c2 }), 400, INVALID('company_id'));
      expectError(await move(apiC1, { asset_id: p.id, company_id: root }), 400, INVALID('company_id'));
      expectError(await move(api, { asset_id: 987654, company_id: c2 }), 400, INVALID('asset_id'));
      expectError(await move(api, { asset_id: foreign, company_id: c2 }), 400, INVALID('asset_id'));
      expectError(await move(apiOther, { asset_id: p.id, company_id: other }), 400, INVALID('asset_id'));
      const after = await one(api, 'assets', p.id);
      assert.deepEqual([after.company_id, after.location_id], [c1, p.location]);
      assert.equal((await one(apiOther, 'assets', foreign)).company_id, other);
    });

    it('refuses malformed requests: missing or extra fields, filters, wrong types', async () => {
      const p = await populated();
      expectError(await move(api, { asset_id: p.id }), 400, INVALID('company_id'));
      expectError(await move(api, { company_id: c2 }), 400, INVALID('asset_id'));
      expectError(await move(api, { asset_id: p.id, company_id: c2, location_id: 1 }), 400, 'Field verification failed, invalid field location_id');
      expectError(await move(api, { asset_id: 'x', company_id: c2 }), 400, INVALID('asset_id'));
      expectError(await api.post(`/3.0/moveasset/id=${p.id}`, { asset_id: p.id, company_id: c2 }), 400, `Invalid filter definition: id=${p.id}`);
      // The PHP client's strings for integers are fine.
      assert.equal(expectOk<Asset[]>(await move(api, { asset_id: String(p.id), company_id: String(c2) }))[0]!.company_id, c2);
    });

    it('a duplicate asset_no in the target company → 409 Data Error, nothing moves', async () => {
      const p = await populated();
      await create(apiC2, 'assets', { asset_no: p.assetNo });
      expectDataError(await move(api, { asset_id: p.id, company_id: c2 }), p.assetNo);
      const after = await one(api, 'assets', p.id);
      assert.deepEqual([after.company_id, after.location_id, after.department_id, after.external_type_id],
        [c1, p.location, p.department, p.externalType]);
      assert.equal((await one(api, 'files', p.file)).company_id, c1);
      assert.equal((await one(api, 'assetreminders', p.reminder)).company_id, c1);
    });

    it('a reminder for a user of the old company goes to the whole new company (audited)', async () => {
      const p = await populated();
      const u = await user(svc, c1);
      const personal = await create(apiC1, 'assetreminders', { asset_id: p.id, user_id: u.id, due_date: '2031-04-20', remind_date: '2031-03-18' });
      const moved = expectOk<Asset[]>(await move(api, { asset_id: p.id, company_id: c2 }));
      assert.equal(moved[0]!.company_id, c2);
      const reminder = await one(api, 'assetreminders', personal);
      assert.deepEqual([reminder.company_id, reminder.user_id], [c2, null]);
      assert.equal(reminder.user, null);
      // The other reminder had no user: only its company changes.
      assert.deepEqual([(await one(api, 'assetreminders', p.reminder)).company_id], [c2]);
      const log = await list(api, `auditlog/endpoint=assetreminders/record_id=${personal}/action=update`);
      assert.deepEqual(log.map((e: { olddata: unknown; newdata: unknown }) => [e.olddata, e.newdata]),
        [[{ company_id: c1, user_id: u.id }, { company_id: c2, user_id: null }]]);
      assert.deepEqual(await list(apiC1, `assetreminders/id=${personal}`), []);
    });

    it('a personal reminder whose due date already has a company-wide one is removed (audited); the company-wide one goes along', async () => {
      const p = await populated(); // its reminder: company-wide, due 2031-03-20
      const [u, v] = [await user(svc, c1), await user(svc, c1)];
      const same = await create(apiC1, 'assetreminders', { asset_id: p.id, user_id: u.id, due_date: '2031-03-20', remind_date: '2031-03-01', message: 'for u' });
      // Two personal reminders of one new date: the first becomes company-wide, the second goes.
      const first = await create(apiC1, 'assetreminders', { asset_id: p.id, user_id: u.id, due_date: '2031-05-01', remind_date: '2031-04-01' });
      const second = await create(apiC1, 'assetreminders', { asset_id: p.id, user_id: v.id, due_date: '2031-05-01', remind_date: '2031-04-02' });
      expectOk<Asset[]>(await move(api, { asset_id: p.id, company_id: c2 }));
      const left = await list(api, `assetreminders/asset_id=${p.id}`);
      assert.deepEqual(left.map((r) => [r.id, r.company_id, r.user_id, r.due_date]),
        [[p.reminder, c2, null, '2031-03-20'], [first, c2, null, '2031-05-01']]);
      for (const gone of [same, second]) {
        const log = await list(api, `auditlog/endpoint=assetreminders/record_id=${gone}/action=delete`);
        assert.equal(log.length, 1, `the removal of reminder ${gone} is audited`);
        assert.equal(log[0]!.olddata.company_id, c1);
      }
      assert.equal((await list(api, `auditlog/endpoint=assetreminders/record_id=${same}/action=delete`))[0]!.olddata.message, 'for u');
    });

    it('sessions need admin with can_create_companies', async () => {
      const { client } = await svc.certificate(root, { impersonation: true });
      const p = await populated();
      const plainAdmin = await user(svc, root, { level: 'admin' });
      const creator = await user(svc, root, { level: 'admin', canCreateCompanies: true });
      const plainUser = await user(svc, root, { level: 'user', canCreateCompanies: true });
      const readonly = await user(svc, root, { level: 'readonly' });
      for (const u of [plainAdmin, plainUser, readonly]) {
        expectError(await move(client, { asset_id: p.id, company_id: c2 }, await login(client, u)), 403, NEEDS_CREATOR);
      }
      assert.equal((await one(api, 'assets', p.id)).company_id, c1);
      const asCreator = await login(client, creator);
      const moved = expectOk<Asset[]>(await move(client, { asset_id: p.id, company_id: c2 }, asCreator));
      assert.equal(moved[0]!.company_id, c2);
      const [entry] = await list(api, `auditlog/endpoint=assets/record_id=${p.id}/action=update`);
      assert.equal(entry!.user_id, creator.id);
      // A creator whose own company is C2 cannot reach C1's assets.
      const c2Creator = await user(svc, c2, { level: 'admin', canCreateCompanies: true });
      const q = await populated();
      expectError(await move(client, { asset_id: q.id, company_id: c2 }, await login(client, c2Creator)), 400, INVALID('asset_id'));
    });
  });
}
