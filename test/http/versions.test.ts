// Versions and conditional writes: `version` is 1 on create and one
// more with every change to a stored value, whoever makes it (the engine's
// set-based and row-by-row writes, a reference cleared by a delete, any other
// write to the table), and the record's last member; POST and DELETE with
// If-Match apply only to records as the client saw them, else 412 and nothing
// written — of two racing writes with one precondition, exactly one wins.
import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { auditOf, create, expectError, expectOk, list, one, stop, update } from './resources-support.ts';
import type { Asset, Change, Updated } from '../support/api.ts';

const VERSIONED = ['assets', 'assetqueue', 'companies', 'departments', 'locations', 'externaltypes', 'files', 'messages', 'users', 'webhooks'] as const;
const changed = (sent: string) => `Record changed since version ${sent}`;

for (const kind of DB_KINDS) {
  describe(`versions and If-Match (${kind})`, () => {
    let svc: Service;
    let api: TestClient;
    let other: TestClient;
    let top: number;

    before(async () => {
      ({ svc, top, api } = await buildTenancy(kind));
      other = (await svc.certificate(top)).client;
    });
    after(() => stop(svc));

    const versionOf = async (endpoint: (typeof VERSIONED)[number], id: number) => (await one(api, endpoint, id)).version;
    const ifMatch = (value: string) => ({ headers: { 'if-match': value } });

    it('version is 1 on create and the last member of every record that carries modified, after its embeds', async () => {
      const asset = await create(api, 'assets', { asset_no: 'V-1' });
      await create(api, 'files', { asset_id: asset, description: 'f' });
      await create(api, 'assetqueue', { description: 'q' });
      await create(api, 'departments', { description: 'd' });
      await create(api, 'locations', { description: 'l' });
      await create(api, 'externaltypes', { description: 'x' });
      await create(api, 'messages', { messagetext: 'm' });
      await create(api, 'users', { username: `v${Date.now()}${kind}`, email: 'v@example.com' });
      await create(api, 'webhooks', { url: 'https://example.com/hook', events: ['*'] });
      for (const endpoint of VERSIONED) {
        const rows = await list(api, endpoint);
        assert.ok(rows.length > 0, endpoint);
        for (const r of rows) {
          assert.equal(Object.keys(r).at(-1), 'version', endpoint);
          assert.equal(r.version, 1, endpoint);
        }
      }
      const [a] = await list(api, `assets/id=${asset}`);
      assert.equal(a!.company!.version, 1, 'an embedded record has its version too, as its last member');
      assert.equal(Object.keys(a!.files[0]!).at(-1), 'version');
      const dated = await create(api, 'assets', { asset_no: 'V-2', next_check: '2030-01-01' });
      const reminder = await create(api, 'assetreminders', { asset_id: dated, due_date: '2030-01-01', remind_date: '2029-12-01', message: 'm' });
      assert.equal('version' in await one(api, 'assetreminders', reminder), false, 'records without modified have no version');
    });

    it('+1 per change of a stored value: set-based, row by row, a cleared reference, any other write; nothing for a change to nothing', async () => {
      const loc = await create(api, 'locations', { description: 'Hall' });
      assert.deepEqual(await update(api, `locations/id=${loc}`, { description: 'Hall 2' }), { records_updated: 1, records_found: 1 });
      assert.equal(await versionOf('locations', loc), 2);
      assert.deepEqual(await update(api, `locations/id=${loc}`, { description: 'Hall 2' }), { records_updated: 0, records_found: 1 });
      assert.equal(await versionOf('locations', loc), 2, 'a POST that changes nothing leaves it');
      // Queue entries change record by record (a hook per record).
      const q = await create(api, 'assetqueue', { description: 'queued' });
      await update(api, `assetqueue/id=${q}`, { model: 'M1' });
      assert.equal(await versionOf('assetqueue', q), 2);
      // Deleting a user clears the sender of its messages: a change to them.
      const user = await create(api, 'users', { username: `sender${Date.now()}${kind}`, email: 's@example.com' });
      const msg = await create(api, 'messages', { messagetext: 'hello', target_user_id: user });
      expectOk(await api.delete(`/3.0/users/id=${user}`));
      assert.equal(await versionOf('messages', msg), 2);
      // A write outside the engine (another process, the operator's SQL) raises it too; one touching only `modified` does not.
      await sql`UPDATE locations SET description = 'by hand' WHERE id = ${loc}`.execute(svc.database.db);
      assert.equal(await versionOf('locations', loc), 3);
      await sql`UPDATE locations SET modified = '2001-01-01 00:00:00' WHERE id = ${loc}`.execute(svc.database.db);
      assert.equal(await versionOf('locations', loc), 3);
      // The change feed shows the record at its new version.
      const feed = expectOk<Change[]>(await api.get(`/3.0/changes/endpoint=locations/record_id=${loc}`));
      assert.deepEqual(feed.map((c) => c.data.version), [1, 2, 3]);
    });

    it('version is read-only and filterable', async () => {
      const loc = await create(api, 'locations', { description: 'ro' });
      expectError(await api.post(`/3.0/locations/id=${loc}`, { version: 9 }), 400, 'Field verification failed, invalid field version');
      expectError(await api.put('/3.0/locations', { description: 'x', version: 9 }), 400, 'Field verification failed, invalid field version');
      await update(api, `locations/id=${loc}`, { description: 'ro 2' });
      assert.deepEqual((await list(api, `locations/id=${loc}/version=2`)).map((r) => r.id), [loc]);
      assert.deepEqual(await list(api, `locations/id=${loc}/version=1`), []);
    });

    it('If-Match: N applies only when every matched record is at version N; else 412 and nothing written', async () => {
      const loc = await create(api, 'locations', { description: 'A' });
      const audit = (await auditOf(api, 'locations', loc)).length;
      expectError(await api.post(`/3.0/locations/id=${loc}`, { description: 'B' }, ifMatch('2')), 412, changed('2'));
      assert.equal((await one(api, 'locations', loc)).description, 'A');
      assert.equal((await auditOf(api, 'locations', loc)).length, audit, 'a refused write writes no audit entry');
      assert.deepEqual(expectOk(await api.post(`/3.0/locations/id=${loc}`, { description: 'B' }, ifMatch('1'))),
        { records_updated: 1, records_found: 1 });
      expectError(await api.post(`/3.0/locations/id=${loc}`, { description: 'C' }, ifMatch('1')), 412, changed('1'));
      // Nothing matched is no precondition met.
      expectError(await api.post('/3.0/locations/id=999999', { description: 'C' }, ifMatch('1')), 412, changed('1'));
      // Several records: all at the version, or none changes.
      const a = await create(api, 'locations', { description: 'many' });
      const b = await create(api, 'locations', { description: 'many' });
      await update(api, `locations/id=${b}`, { data: { n: 1 } });
      expectError(await api.post('/3.0/locations/description=many', { data: null }, ifMatch('1')), 412, changed('1'));
      assert.deepEqual([await versionOf('locations', a), await versionOf('locations', b)], [1, 2]);
      expectError(await api.delete(`/3.0/locations/id=${a}`, ifMatch('2')), 412, changed('2'));
      assert.deepEqual(expectOk(await api.delete(`/3.0/locations/id=${a}`, ifMatch('1'))), { records_deleted: 1, records_found: 1 });
      assert.deepEqual(await list(api, `locations/id=${a}`), []);
    });

    it('If-Match with an ETag: the records the filter matches now are exactly those of that GET', async () => {
      const x = await create(api, 'departments', { description: 'etag' });
      const got = await api.get('/3.0/departments/description=etag');
      const tag = String(got.headers.etag);
      assert.deepEqual(expectOk(await api.post('/3.0/departments/description=etag', { data: { k: 1 } }, ifMatch(tag))),
        { records_updated: 1, records_found: 1 });
      expectError(await api.post('/3.0/departments/description=etag', { data: { k: 2 } }, ifMatch(tag)), 412, changed(tag));
      // A new record matching the filter is a change too.
      const fresh = String((await api.get('/3.0/departments/description=etag')).headers.etag);
      await create(api, 'departments', { description: 'etag' });
      expectError(await api.delete('/3.0/departments/description=etag', ifMatch(fresh)), 412, changed(fresh));
      // One tag of a list, or the tag without W/, will do.
      const now = String((await api.get('/3.0/departments/description=etag')).headers.etag);
      const r = await api.delete('/3.0/departments/description=etag', ifMatch(`"stale", ${now.slice(2)}`));
      assert.deepEqual(expectOk(r), { records_deleted: 2, records_found: 2 });
      assert.deepEqual(await list(api, `departments/id=${x}`), []);
    });

    it('an ETag cannot vouch for more records than its page shows', async () => {
      for (let i = 0; i < 31; i++) await create(api, 'externaltypes', { description: 'paged' });
      const tag = String((await api.get('/3.0/externaltypes/description=paged')).headers.etag);
      expectError(await api.post('/3.0/externaltypes/description=paged', { data: null }, ifMatch(tag)), 412, changed(tag));
    });

    it('If-Match: * needs some matched record; a malformed If-Match is 400; a record without versions never matches a version', async () => {
      const loc = await create(api, 'locations', { description: 'star' });
      assert.equal(expectOk<Updated>(await api.post(`/3.0/locations/id=${loc}`, { description: 'star 2' }, ifMatch('*'))).records_updated, 1);
      expectError(await api.post('/3.0/locations/id=999999', { description: 'x' }, ifMatch('*')), 412, changed('*'));
      for (const bad of ['W/nope', 'abc', '1.5', '"a" "b"', '-1']) {
        expectError(await api.post(`/3.0/locations/id=${loc}`, { description: 'x' }, ifMatch(bad)), 400,
          'Field verification failed, invalid value for If-Match');
      }
      assert.equal((await one(api, 'locations', loc)).description, 'star 2');
      const asset = await create(api, 'assets', { asset_no: 'REM-1', next_check: '2030-01-01' });
      const reminder = await create(api, 'assetreminders', { asset_id: asset, due_date: '2030-01-01', remind_date: '2029-12-01', message: 'm' });
      expectError(await api.post(`/3.0/assetreminders/id=${reminder}`, { acknowledged: 1 }, ifMatch('1')), 412, changed('1'));
    });

    it('If-Match on a password and on a move speaks of the users matched and of the moved asset', async () => {
      const user = await create(api, 'users', { username: `pw${Date.now()}${kind}`, email: 'pw@example.com' });
      expectError(await api.post(`/3.0/password/id=${user}`, { new_password: 'long enough' }, ifMatch('7')), 412, changed('7'));
      assert.equal(expectOk<Updated>(await api.post(`/3.0/password/id=${user}`, { new_password: 'long enough' }, ifMatch('1'))).records_updated, 1);
      assert.equal(await versionOf('users', user), 2);
      const child = await svc.company(`Child ${kind}`, top);
      const asset = await create(api, 'assets', { asset_no: 'MV-1' });
      const move = { asset_id: asset, company_id: child };
      expectError(await api.post('/3.0/moveasset', move, ifMatch('2')), 412, changed('2'));
      const tag = String((await api.get(`/3.0/assets/id=${asset}`)).headers.etag);
      const moved = expectOk<Asset[]>(await api.post('/3.0/moveasset', move, ifMatch(tag)));
      assert.deepEqual([moved[0]!.company_id, moved[0]!.version], [child, 2]);
    });

    it('the checks keep their order: no filter is refused before a malformed If-Match', async () => {
      expectError(await api.post('/3.0/locations', { description: 'x' }, ifMatch('nope')), 400,
        'No fields specified for record updating. This would update ALL locations records for your company. Request aborted.');
      expectError(await api.delete('/3.0/locations', ifMatch('nope')), 400,
        'No fields specified for record deletion. This would delete ALL locations records for your company. Request aborted.');
    });

    it('two writers with the same precondition: exactly one wins, the other gets 412, nothing half-written', async () => {
      for (let round = 0; round < 5; round++) {
        const asset = await create(api, 'assets', { asset_no: `RACE-${round}` });
        const [a, b] = await Promise.all([
          api.post(`/3.0/assets/id=${asset}`, { status: 'A wins' }, ifMatch('1')),
          other.post(`/3.0/assets/id=${asset}`, { status: 'B wins' }, ifMatch('1')),
        ]);
        assert.deepEqual([a.status, b.status].sort(), [200, 412], `${a.text} ${b.text}`);
        const winner = a.status === 200 ? 'A wins' : 'B wins';
        const stored = await one(api, 'assets', asset);
        assert.deepEqual([stored.status, stored.version], [winner, 2]);
        assert.equal((await auditOf(api, 'assets', asset)).filter((e) => e.action === 'update').length, 1);
      }
    });
  });
}
