// auditlog: one entry per changed record with the changed
// fields, who and from where; notes through PUT; nothing changes an entry.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { allNull, ASSET_SHORT, AUDIT_FIELDS, auditOf, countRows, create, expectError, expectOk, keys, list, nowText, stop, update } from './resources-support.ts';
import type { Inserted } from '../support/api.ts';

for (const kind of DB_KINDS) {
  describe(`auditlog (${kind})`, () => {
    let svc: Service;
    let top: number, other: number;
    let api: TestClient;
    let clientId: number;

    before(async () => {
      ({ svc, top, api, clientId } = await buildTenancy(kind));
      other = await svc.company('Other');
    });
    after(() => stop(svc));

    it('create, update and delete each write one entry with the changed fields', async () => {
      const id = await create(api, 'assets', { asset_no: 'AU-1', description: 'first', period: 1 });
      let log = await auditOf(api, 'assets', id);
      assert.equal(log.length, 1);
      const c = log[0]!;
      assert.deepEqual(keys(c), [...AUDIT_FIELDS, 'asset', 'company', 'user', 'file']);
      assert.deepEqual({ ...c, id: 0, newdata: null, asset: null, company: null }, {
        id: 0, asset_id: id, company_id: top, user_id: null, file_id: null, logdate: nowText(svc), message: `Created assets record ${id}`,
        olddata: {}, newdata: null, endpoint: 'assets', record_id: id, action: 'create', client_id: clientId, ip: '127.0.0.1',
        asset: null, company: null, user: null, file: null,
      });
      assert.deepEqual([c.newdata.asset_no, c.newdata.description, c.newdata.period, c.newdata.company_id], ['AU-1', 'first', 1, top]);
      assert.deepEqual(keys(c.asset), ASSET_SHORT);
      assert.equal(c.asset!.id, id);
      assert.equal(c.company!.id, top);

      svc.clock.advance(1000);
      await update(api, `assets/id=${id}`, { description: 'second', status: 'Active' }); // status unchanged
      log = await auditOf(api, 'assets', id);
      assert.equal(log.length, 2);
      assert.deepEqual([log[1]!.action, log[1]!.message, log[1]!.olddata, log[1]!.newdata, log[1]!.logdate],
        ['update', `Updated assets record ${id}`, { description: 'first' }, { description: 'second' }, nowText(svc)]);

      // A change the service derives (next_check from last_check) is in the same entry.
      await update(api, `assets/id=${id}`, { last_check: '2024-01-31' });
      log = await auditOf(api, 'assets', id);
      assert.deepEqual([log[2]!.olddata, log[2]!.newdata], [{ next_check: null, last_check: null }, { next_check: '2024-02-29', last_check: '2024-01-31' }]);

      // Equal values: nothing changed, nothing logged.
      await update(api, `assets/id=${id}`, { description: 'second' });
      assert.equal((await auditOf(api, 'assets', id)).length, 3);

      assert.deepEqual(expectOk(await api.delete(`/3.0/assets/id=${id}`)), { records_deleted: 1, records_found: 1 });
      log = await auditOf(api, 'assets', id);
      assert.equal(log.length, 4);
      const d = log[3]!;
      assert.deepEqual([d.action, d.message, d.newdata, d.asset_id, d.record_id], ['delete', `Deleted assets record ${id}`, {}, id, id]);
      assert.deepEqual([d.olddata.id, d.olddata.asset_no, d.olddata.description, d.olddata.next_check], [id, 'AU-1', 'second', '2024-02-29']);
      // The asset is gone; the entries keep its id, and the embed is a record the caller cannot see (all members null).
      assert.deepEqual(d.asset, allNull(ASSET_SHORT));
      assert.deepEqual((await auditOf(api, 'assets', id)).map((e) => e.asset_id), [id, id, id, id]);
    });

    it('one entry per record when a request changes several', async () => {
      const a = await create(api, 'departments', { description: 'Multi one' });
      const b = await create(api, 'departments', { description: 'Multi two' });
      assert.deepEqual(await update(api, 'departments/description~Multi', { data: { x: 1 } }), { records_updated: 2, records_found: 2 });
      for (const id of [a, b]) {
        const log = await auditOf(api, 'departments', id);
        assert.deepEqual(log.map((e) => [e.action, e.message]), [['create', `Created departments record ${id}`], ['update', `Updated departments record ${id}`]]);
        assert.deepEqual([log[1]!.olddata, log[1]!.newdata], [{ data: null }, { data: { x: 1 } }]);
      }
      const ids = await create(api, 'departments', { description: 'single' });
      const batch = expectOk<Inserted>(await api.put('/3.0/departments', [{ description: 'b1' }, { description: 'b2' }]), 201);
      assert.equal(batch.records_inserted, 2);
      for (const id of [ids, ...batch.ids]) assert.equal((await auditOf(api, 'departments', id)).length, 1);
    });

    it('a refused request writes no entry', async () => {
      const before = await countRows(svc, 'auditlog');
      expectError(await api.put('/3.0/departments', [{ description: 'ok' }, { description: '' }]), 400, 'Field verification failed, invalid value for description');
      assert.equal(await countRows(svc, 'auditlog'), before);
    });

    it('PUT adds notes: {message, asset_id?} → 201', async () => {
      const asset = await create(api, 'assets', { asset_no: 'N-1' });
      const res = expectOk<Inserted>(await api.put('/3.0/auditlog', { message: 'Calibrated by lab', asset_id: asset }), 201);
      assert.equal(res.records_inserted, 1);
      const [note] = await list(api, `auditlog/id=${res.ids[0]}`);
      assert.deepEqual({ ...note, id: 0, asset: null, company: null }, {
        id: 0, asset_id: asset, company_id: top, user_id: null, file_id: null, logdate: nowText(svc), message: 'Calibrated by lab',
        olddata: {}, newdata: {}, endpoint: 'auditlog', record_id: null, action: 'note', client_id: clientId, ip: '127.0.0.1',
        asset: null, company: null, user: null, file: null,
      });
      assert.equal(note!.asset!.asset_no, 'N-1');
      const plain = expectOk<Inserted>(await api.put('/3.0/auditlog', { message: 'General remark' }), 201);
      const [p] = await list(api, `auditlog/id=${plain.ids[0]}`);
      assert.deepEqual([p!.asset_id, p!.company_id, p!.action, p!.asset], [null, top, 'note', null]);
      const two = expectOk<Inserted>(await api.put('/3.0/auditlog', [{ message: 'one' }, { message: 'two' }]), 201);
      assert.equal(two.records_inserted, 2);
    });

    it('a note takes nothing but message and asset_id', async () => {
      const outsider = await create((await svc.certificate(other)).client, 'assets', { asset_no: 'O-1' });
      const before = await countRows(svc, 'auditlog');
      expectError(await api.put('/3.0/auditlog', { asset_id: null }), 400, 'Field verification failed, invalid value for message');
      for (const field of ['olddata', 'newdata', 'action', 'endpoint', 'record_id', 'company_id', 'user_id', 'client_id', 'ip', 'logdate', 'id']) {
        expectError(await api.put('/3.0/auditlog', { message: 'x', [field]: field === 'olddata' || field === 'newdata' ? {} : 1 }), 400,
          `Field verification failed, invalid field ${field}`);
      }
      expectError(await api.put('/3.0/auditlog', { message: 'x', asset_id: outsider }), 400, 'Field verification failed, invalid value for asset_id');
      expectError(await api.put('/3.0/auditlog', { message: 'x', asset_id: 999999 }), 400, 'Field verification failed, invalid value for asset_id');
      expectError(await api.put('/3.0/auditlog/id=1', { message: 'x' }), 400, 'Invalid filter definition: id=1');
      assert.equal(await countRows(svc, 'auditlog'), before);
      // The outsider's own entries are not visible here.
      assert.deepEqual(await list(api, `auditlog/endpoint=assets/record_id=${outsider}`), []);
    });

    it('POST and DELETE → 405 with an Allow header; entries never change', async () => {
      const [first] = await list(api, 'auditlog');
      const post = await api.post(`/3.0/auditlog/id=${first!.id}`, { message: 'rewritten' });
      expectError(post, 405, 'Method POST not supported on endpoint auditlog');
      assert.equal(post.headers.allow, 'GET, HEAD, PUT');
      const del = await api.delete(`/3.0/auditlog/id=${first!.id}`);
      expectError(del, 405, 'Method DELETE not supported on endpoint auditlog');
      assert.equal(del.headers.allow, 'GET, HEAD, PUT');
      assert.deepEqual((await list(api, `auditlog/id=${first!.id}`))[0], first);
    });
  });
}
