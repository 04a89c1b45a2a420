// assetchecks: every bad body gets its 400 and writes nothing; standards and files of
// another company are refused like missing ones; a child company sees a check whose
// standard its parent keeps with that standard's members null; access levels; CSV out
// and in with points and standards as JSON text — on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addDays } from '../../src/model/dates.ts';
import type { Inserted } from '../support/api.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { login, user } from '../support/workflows.ts';
import { allNull, ASSET_SHORT, countRows, create, expectError, expectOk, list, one, start, stop, todayText } from './resources-support.ts';

const invalid = (field: string) => `Field verification failed, invalid value for ${field}`;
const p = (o: Record<string, unknown> = {}) => ({ name: 'p', lower_limit: 1, upper_limit: 2, as_found: 1.5, ...o });

for (const kind of DB_KINDS) {
  describe(`assetchecks input, scope and access (${kind})`, () => {
    let svc: Service;
    let top: number, child: number, other: number;
    let api: TestClient, childApi: TestClient, otherApi: TestClient;
    let asset: number, childAsset: number, otherAsset: number, parentStandard: number;

    before(async () => {
      svc = await start(kind);
      top = await svc.company('Top');
      child = await svc.company('Child', top);
      other = await svc.company('Other');
      api = (await svc.certificate(top, { impersonation: true })).client;
      childApi = (await svc.certificate(child)).client;
      otherApi = (await svc.certificate(other)).client;
      asset = await create(api, 'assets', { asset_no: 'IN-1' });
      parentStandard = await create(api, 'assets', { asset_no: 'STD-P', next_check: '2099-01-01' });
      childAsset = await create(api, 'assets', { asset_no: 'IN-C', company_id: child });
      otherAsset = await create(otherApi, 'assets', { asset_no: 'IN-O' });
    });
    after(() => stop(svc));

    it('each bad body answers its 400 and writes nothing', async () => {
      const file = await create(api, 'files', { asset_id: parentStandard });
      const otherFile = await create(otherApi, 'files', { asset_id: otherAsset });
      const base = { asset_id: asset, check_date: '2026-01-01' };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...base, points: {} }, 'points'],
        [{ ...base, points: 'x' }, 'points'],
        [{ ...base, points: [p({ as_found: '1.5' })] }, 'points'],
        [{ ...base, points: [p({ lower_limit: 3 })] }, 'points'],
        [{ ...base, points: [p({ nominal: 5 })] }, 'points'],
        [{ ...base, points: [p({ extra: 1 })] }, 'points'],
        [{ ...base, points: [p({ as_found: null })] }, 'points'],
        [{ ...base, points: Array.from({ length: 501 }, () => p()) }, 'points'],
        [{ ...base }, 'result'],
        [{ ...base, result: 'ok' }, 'result'],
        [{ ...base, points: [p()], result: 'fail' }, 'result'],
        [{ ...base, result: 'pass', check_type: 'unknown' }, 'check_type'],
        [{ ...base, result: 'pass', check_date: addDays(todayText(svc), 2) }, 'check_date'],
        [{ ...base, result: 'pass', check_date: '2026-02-30' }, 'check_date'],
        [{ ...base, result: 'pass', file_id: file }, 'file_id'],
        [{ ...base, result: 'pass', file_id: otherFile }, 'file_id'],
        [{ ...base, result: 'pass', standard_ids: [asset] }, 'standard_ids'],
        [{ ...base, result: 'pass', standard_ids: [parentStandard, parentStandard] }, 'standard_ids'],
        [{ ...base, result: 'pass', standard_ids: [otherAsset] }, 'standard_ids'],
        [{ ...base, result: 'pass', standard_ids: [99999999] }, 'standard_ids'],
        [{ ...base, result: 'pass', standard_ids: [1.5] }, 'standard_ids'],
        [{ ...base, result: 'pass', standard_ids: Array.from({ length: 51 }, (_, i) => i + 1) }, 'standard_ids'],
        [{ ...base, result: 'pass', standard_ids: 'x' }, 'standard_ids'],
        [{ ...base, asset_id: otherAsset, result: 'pass' }, 'asset_id'],
      ];
      const before = await countRows(svc, 'auditlog');
      for (const [body, field] of cases) expectError(await api.put('/3.0/assetchecks', body), 400, invalid(field));
      // A number that is no finite double, written as JSON text.
      expectError(await api.put('/3.0/assetchecks', '{"asset_id":' + asset + ',"check_date":"2026-01-01","points":[{"name":"p","lower_limit":1e999,"as_found":1}]}'),
        400, invalid('points'));
      expectError(await api.put('/3.0/assetchecks', { ...base, result: 'pass', company_id: top }), 400, 'Field verification failed, invalid field company_id');
      assert.equal(await countRows(svc, 'auditlog'), before);
      assert.deepEqual(await list(api, `assetchecks/asset_id=${asset}`), []);
      assert.equal((await one(api, 'assets', asset)).last_check, null);
    });

    it("a child company's check may use its parent's standard; the child sees that standard's members null", async () => {
      const id = await create(api, 'assetchecks', { asset_id: childAsset, check_date: '2026-01-02', result: 'pass', standard_ids: [parentStandard] });
      const seen = await one(childApi, 'assetchecks', id);
      assert.deepEqual(seen.standard_ids, [parentStandard]);
      assert.deepEqual(seen.standards, [allNull(ASSET_SHORT)]);
      assert.equal((await one(api, 'assetchecks', id)).standards[0]?.id, parentStandard);
      // The child cannot name its parent's standard itself, nor filter on what it cannot see.
      expectError(await childApi.put('/3.0/assetchecks', { asset_id: childAsset, check_date: '2026-01-03', result: 'pass', standard_ids: [parentStandard] }),
        400, invalid('standard_ids'));
      assert.deepEqual(await list(childApi, `assetchecks/standards.asset_no=STD-P`), []);
      assert.deepEqual(await list(otherApi, 'assetchecks'), []);
      assert.deepEqual(await list(otherApi, `assetchecks/id=${id}`), []);
      expectOk(await otherApi.post(`/3.0/assetchecks/id=${id}`, { performed_by: 'x' }));
      assert.equal((await one(api, 'assetchecks', id)).performed_by, '');
    });

    it('sessions: readonly reads, user records checks but cannot correct or delete them, admin does all', async () => {
      const as = async (level: 'readonly' | 'user' | 'admin') => ({ headers: await login(api, await user(svc, top, { level })) });
      const body = { asset_id: asset, check_date: '2026-01-05', result: 'pass' };
      const reader = await as('readonly');
      expectOk(await api.get('/3.0/assetchecks', reader));
      assert.equal((await api.put('/3.0/assetchecks', body, reader)).status, 403);
      const tech = await as('user');
      const id = expectOk<Inserted>(await api.put('/3.0/assetchecks', body, tech), 201).ids[0]!;
      assert.equal((await api.post(`/3.0/assetchecks/id=${id}`, { performed_by: 'me' }, tech)).status, 403);
      assert.equal((await api.delete(`/3.0/assetchecks/id=${id}`, tech)).status, 403);
      const admin = await as('admin');
      expectOk(await api.post(`/3.0/assetchecks/id=${id}`, { performed_by: 'me' }, admin));
      expectOk(await api.delete(`/3.0/assetchecks/id=${id}`, admin));
    });

    it('CSV export holds points and standard_ids as JSON text, and imports back', async () => {
      const a = await create(api, 'assets', { asset_no: 'CSV-1' });
      await create(api, 'assetchecks', { asset_id: a, check_date: '2026-01-06', standard_ids: [parentStandard],
        points: [p({ unit: 'mm', as_found: 1.25, uncertainty: 0.05 })] });
      const res = await api.get(`/3.0/assetchecks/asset_id=${a}`, { headers: { accept: 'text/csv' } });
      assert.equal(res.status, 200);
      const [header, row] = res.text.trimEnd().split('\r\n');
      const columns = header!.split(',');
      assert.deepEqual(columns.slice(7, 10), ['result', 'points', 'standard_ids']);
      assert.ok(row!.includes('"[{""name"":""p"",""unit"":""mm"",""nominal"":null,""lower_limit"":1,""upper_limit"":2,""as_found"":1.25'), row);
      assert.ok(row!.includes(`,[${parentStandard}],`), row);
      const again = res.text.replace('2026-01-06', '2026-01-07');
      expectOk(await api.put('/3.0/assetchecks', again, { headers: { 'content-type': 'text/csv' } }), 201);
      const checks = await list(api, `assetchecks/asset_id=${a}`);
      assert.deepEqual(checks.map((c: { check_date: string }) => c.check_date), ['2026-01-06', '2026-01-07']);
      assert.deepEqual(checks[1]?.points, checks[0]?.points);
      assert.deepEqual(checks[1]?.standard_ids, [parentStandard]);
      const bad = res.text.replace('""as_found"":1.25', '""as_found"":""x""');
      assert.equal((await api.put('/3.0/assetchecks', bad, { headers: { 'content-type': 'text/csv' } })).status, 400);
    });
  });
}
