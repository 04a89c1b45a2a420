// companies: the tenancy tree seen and changed through the API.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { revokeClient } from '../../src/admin/accounts.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import {
  allNull, COMPANY_FIELDS, countRows, create, expectDataError, expectError, expectOk, keys, list, nowText, one, start, stop, unique, update, recordKeys,
} from './resources-support.ts';

const badParent = 'Field verification failed, invalid value for parent_id';
const badData = 'Field verification failed, invalid value for data';

for (const kind of DB_KINDS) {
  describe(`companies (${kind})`, () => {
    let svc: Service;
    // root ─ top ─ child ─ grandchild;  other (a separate tree)
    let root: number, top: number, child: number, grandchild: number, other: number;
    let api: TestClient; // certificate of `top`
    let rootApi: TestClient;

    before(async () => {
      svc = await start(kind);
      root = await svc.company('Root');
      top = await svc.company('Top', root);
      child = await svc.company('Child', top);
      grandchild = await svc.company('Grandchild', child);
      other = await svc.company('Other');
      api = (await svc.certificate(top)).client;
      rootApi = (await svc.certificate(root)).client;
    });
    after(() => stop(svc));

    it('GET lists the own company and its descendants, each with its parentcompany embed', async () => {
      const rows = await list(api, 'companies');
      assert.deepEqual(rows.map((r) => r.id), [top, child, grandchild]);
      for (const r of rows) assert.deepEqual(keys(r), recordKeys(COMPANY_FIELDS, 'parentcompany'));
      // The parent of the top company is outside the scope: all members null.
      assert.equal(rows[0]!.parent_id, root);
      assert.deepEqual(rows[0]!.parentcompany, allNull(COMPANY_FIELDS));
      // A visible parent is embedded as a company record without its own embeds.
      assert.deepEqual(keys(rows[1]!.parentcompany), COMPANY_FIELDS);
      assert.equal(rows[1]!.parentcompany!.id, top);
      assert.equal(rows[1]!.parentcompany!.name, 'Top');
      assert.equal(rows[2]!.parentcompany!.id, child);
    });

    it('a root company has parentcompany null', async () => {
      const r = await one(rootApi, 'companies', root);
      assert.equal(r.parent_id, null);
      assert.equal(r.parentcompany, null);
      assert.equal(r.name, 'Root');
    });

    it('companies outside the scope are never listed, counted or changed', async () => {
      const res = await api.get(`/3.0/companies/id=${other}`);
      assert.deepEqual(expectOk(res), []);
      assert.deepEqual(res.envelope.pagination, { total_pages: 0, total_records: 0 });
      assert.deepEqual(await update(api, `companies/id=${other}`, { name: 'x' }), { records_updated: 0, records_found: 0 });
      assert.deepEqual(expectOk(await api.delete(`/3.0/companies/id=${root}`)), { records_deleted: 0, records_found: 0 });
    });

    it('PUT creates a child of the caller company by default, with created and modified set', async () => {
      const id = await create(api, 'companies', { name: 'New Co' });
      const r = await one(api, 'companies', id);
      assert.deepEqual({ ...r, id: 0 }, {
        id: 0, name: 'New Co', created: nowText(svc), logo: null, subdomain: null, styles: null, data: null,
        parent_id: top, modified: nowText(svc), parentcompany: r.parentcompany, version: 1,
      });
      assert.equal(r.parentcompany!.id, top);
    });

    it('PUT under a company of the scope, and refuses a parent outside it', async () => {
      const id = await create(api, 'companies', { name: 'Under grandchild', parent_id: grandchild });
      assert.equal((await one(api, 'companies', id)).parent_id, grandchild);
      const before = await countRows(svc, 'companies');
      expectError(await api.put('/3.0/companies', { name: 'x', parent_id: root }), 400, badParent);
      expectError(await api.put('/3.0/companies', { name: 'x', parent_id: other }), 400, badParent);
      expectError(await api.put('/3.0/companies', { name: 'x', parent_id: 999999 }), 400, badParent);
      expectError(await api.put('/3.0/companies', { name: 'x', parent_id: null }), 400, badParent);
      assert.equal(await countRows(svc, 'companies'), before);
    });

    it('PUT needs a name and takes no read-only fields', async () => {
      expectError(await api.put('/3.0/companies', { logo: 'a.png' }), 400, 'Field verification failed, invalid value for name');
      expectError(await api.put('/3.0/companies', { name: 'x', created: '2024-01-01 00:00:00' }), 400, 'Field verification failed, invalid field created');
      expectError(await api.put('/3.0/companies', { name: 'x', id: 5 }), 400, 'Field verification failed, invalid field id');
      expectError(await api.put('/3.0/companies', { name: 'x', styles: [1] }), 400, 'Field verification failed, invalid value for styles');
    });

    it('a parent_id change may not create a cycle or leave the scope', async () => {
      const a = await create(api, 'companies', { name: 'A' });
      const b = await create(api, 'companies', { name: 'B', parent_id: a });
      const c = await create(api, 'companies', { name: 'C', parent_id: b });
      expectError(await api.post(`/3.0/companies/id=${a}`, { parent_id: c }), 400, badParent);
      expectError(await api.post(`/3.0/companies/id=${a}`, { parent_id: a }), 400, badParent);
      expectError(await api.post(`/3.0/companies/id=${b}`, { parent_id: c }), 400, badParent);
      expectError(await api.post(`/3.0/companies/id=${a}`, { parent_id: root }), 400, badParent);
      expectError(await api.post(`/3.0/companies/id=${a}`, { parent_id: other }), 400, badParent);
      expectError(await api.post(`/3.0/companies/id=${a}`, { parent_id: null }), 400, badParent);
      assert.equal((await one(api, 'companies', a)).parent_id, top);
      // A legal move inside the scope.
      assert.deepEqual(await update(api, `companies/id=${c}`, { parent_id: a }), { records_updated: 1, records_found: 1 });
      assert.equal((await one(api, 'companies', c)).parent_id, a);
    });

    it('two concurrent moves cannot close a cycle: at most one succeeds, never a 500, every company still reaches a root', async () => {
      for (let round = 0; round < 10; round++) {
        // A fresh tree each round: R → {X, Y}, Y → W.
        const r = await create(api, 'companies', { name: `Race R ${round}` });
        const x = await create(api, 'companies', { name: `Race X ${round}`, parent_id: r });
        const y = await create(api, 'companies', { name: `Race Y ${round}`, parent_id: r });
        const w = await create(api, 'companies', { name: `Race W ${round}`, parent_id: y });
        // Alone, each move is legal; together they would make X → W → Y → X.
        const answers = await Promise.all([
          api.post(`/3.0/companies/id=${x}`, { parent_id: w }),
          api.post(`/3.0/companies/id=${y}`, { parent_id: x }),
        ]);
        let succeeded = 0;
        for (const res of answers) {
          if (res.status === 200) {
            assert.deepEqual(res.envelope.response, { records_updated: 1, records_found: 1 }, `round ${round}`);
            succeeded++;
          } else {
            expectError(res, 400, badParent);
          }
        }
        assert.ok(succeeded <= 1, `round ${round}: both moves succeeded`);
        // Following parent_id from every company of the database reaches a root.
        const rows = await svc.database.db.selectFrom('companies').select(['id', 'parent_id']).execute();
        const parentOf = new Map(rows.map((c) => [Number(c.id), c.parent_id === null ? null : Number(c.parent_id)]));
        for (const start of parentOf.keys()) {
          const seen = new Set<number>();
          for (let at: number | null = start; at !== null; at = parentOf.get(at) ?? null) {
            assert.ok(!seen.has(at), `round ${round}: company ${start} is on a cycle through ${[...seen].join(' → ')}`);
            seen.add(at);
          }
        }
        // What is stored is what was answered.
        assert.equal(parentOf.get(x), answers[0].status === 200 ? w : r, `round ${round}`);
        assert.equal(parentOf.get(y), answers[1].status === 200 ? x : r, `round ${round}`);
      }
    });

    it("the caller's top company keeps its parent_id and approving system", async () => {
      expectError(await api.post(`/3.0/companies/id=${top}`, { parent_id: child }), 400, badParent);
      expectError(await api.post(`/3.0/companies/id=${top}`, { parent_id: null }), 400, badParent);
      const manager = await svc.certificate(top);
      expectError(await api.post(`/3.0/companies/id=${top}`, { data: { api_assetqueue_manager_id: manager.info.id } }), 400, badData);
      // Other changes of the top company are allowed.
      assert.deepEqual(await update(api, `companies/id=${top}`, { data: { region: 'north' } }), { records_updated: 1, records_found: 1 });
      const r = await one(api, 'companies', top);
      assert.equal(r.parent_id, root);
      assert.deepEqual(r.data, { region: 'north' });
      // From above, the same company is not the top of the scope and may get an approving system.
      assert.deepEqual(await update(rootApi, `companies/id=${top}`, { data: { api_assetqueue_manager_id: manager.info.id } }),
        { records_updated: 1, records_found: 1 });
      // ... which its own certificate can then neither change nor remove.
      expectError(await api.post(`/3.0/companies/id=${top}`, { data: { region: 'south' } }), 400, badData);
      expectError(await api.post(`/3.0/companies/id=${top}`, { data: null }), 400, badData);
      assert.deepEqual(await update(rootApi, `companies/id=${top}`, { data: null }), { records_updated: 1, records_found: 1 });
    });

    it('the top company of the scope cannot be deleted', async () => {
      const solo = await svc.company('Solo');
      const soloApi = (await svc.certificate(solo)).client;
      expectDataError(await soloApi.delete(`/3.0/companies/id=${solo}`));
      assert.equal((await list(soloApi, 'companies')).length, 1);
    });

    it('deleting a company that is still referenced → 409 naming the referrer', async () => {
      const parent = await create(api, 'companies', { name: 'Parent' });
      const kid = await create(api, 'companies', { name: 'Kid', parent_id: parent });
      expectError(await api.delete(`/3.0/companies/id=${parent}`), 409, `Data Error: companies record ${parent} is still referenced by companies`);
      await create(api, 'departments', { description: 'Lab', company_id: kid });
      expectError(await api.delete(`/3.0/companies/id=${kid}`), 409, `Data Error: companies record ${kid} is still referenced by departments`);
      assert.equal((await list(api, `companies/id=${kid}`)).length, 1);
      const certified = await create(api, 'companies', { name: 'Certified' });
      await svc.certificate(certified);
      expectError(await api.delete(`/3.0/companies/id=${certified}`), 409, `Data Error: companies record ${certified} is still referenced by clients`);
      // Unreferenced: deleted, and audited.
      const empty = await create(api, 'companies', { name: 'Empty' });
      assert.deepEqual(expectOk(await api.delete(`/3.0/companies/id=${empty}`)), { records_deleted: 1, records_found: 1 });
      assert.deepEqual(await list(api, `companies/id=${empty}`), []);
    });

    it('deleting a company with its children in the same request works', async () => {
      const p = await create(api, 'companies', { name: 'Gone parent' });
      const k = await create(api, 'companies', { name: 'Gone kid', parent_id: p });
      assert.deepEqual(expectOk(await api.delete(`/3.0/companies/name~Gone`)), { records_deleted: 2, records_found: 2 });
      assert.deepEqual(await list(api, `companies/id=${k}`), []);
    });

    it("a deleted company's log, its deletion included, passes to the nearest ancestor that stays", async () => {
      const p = await create(api, 'companies', { name: 'Logged parent' });
      const k = await create(api, 'companies', { name: 'Logged kid', parent_id: p });
      const dept = await create(api, 'departments', { description: 'Short-lived', company_id: k });
      expectOk(await api.delete(`/3.0/departments/id=${dept}`));
      // A failed delete moves nothing.
      expectError(await api.delete(`/3.0/companies/id=${p}`), 409, `Data Error: companies record ${p} is still referenced by companies`);
      assert.deepEqual((await list(api, `auditlog/endpoint=departments/record_id=${dept}`)).map((e) => e.company_id), [k, k]);
      expectOk(await api.delete(`/3.0/companies/name~Logged`));
      const deletions = await list(api, 'auditlog/endpoint=companies/action=delete/record_id>0');
      const mine = deletions.filter((e) => e.record_id === p || e.record_id === k);
      assert.deepEqual(mine.map((e) => [e.record_id, e.company_id]).sort(), [[k, top], [p, top]].sort());
      // The entries written while the kid existed are still readable, now under `top`.
      const dept_log = await list(api, `auditlog/endpoint=departments/record_id=${dept}`);
      assert.deepEqual(dept_log.map((e) => [e.action, e.company_id]), [['create', top], ['delete', top]]);
      assert.deepEqual(await list(api, `auditlog/company_id=${k}`), []);
      // A company of another tree sees none of it.
      const otherApi = (await svc.certificate(other)).client;
      assert.deepEqual(await list(otherApi, `auditlog/endpoint=companies/record_id=${p}`), []);
      // Deleting a single company: its log passes to its parent.
      const lone = await create(api, 'companies', { name: 'Lone', parent_id: child });
      expectOk(await api.delete(`/3.0/companies/id=${lone}`));
      const log = await list(api, `auditlog/endpoint=companies/record_id=${lone}`);
      assert.deepEqual(log.map((e) => [e.action, e.company_id]), [['create', child], ['delete', child]]);
    });

    it('subdomain is unique → 409, and nothing is written', async () => {
      const sub = unique('sub');
      const a = await create(api, 'companies', { name: 'S1', subdomain: sub });
      const before = await countRows(svc, 'companies');
      expectDataError(await api.put('/3.0/companies', { name: 'S2', subdomain: sub }));
      assert.equal(await countRows(svc, 'companies'), before);
      const b = await create(api, 'companies', { name: 'S3' });
      expectDataError(await api.post(`/3.0/companies/id=${b}`, { subdomain: sub }));
      assert.equal((await one(api, 'companies', b)).subdomain, null);
      // Setting its own value again is no change.
      assert.deepEqual(await update(api, `companies/id=${a}`, { subdomain: sub }), { records_updated: 0, records_found: 1 });
    });

    it('moving an intermediate company may not take a descendant out of its approving system scope', async () => {
      const a = await create(api, 'companies', { name: 'Approver home' });
      const aCert = await svc.certificate(a);
      const b = await create(api, 'companies', { name: 'Middle', parent_id: a });
      const y = await create(api, 'companies', { name: 'Managed leaf', parent_id: b, data: { api_assetqueue_manager_id: aCert.info.id } });
      expectError(await api.post(`/3.0/companies/id=${b}`, { parent_id: top }), 400, badParent);
      assert.equal((await one(api, 'companies', b)).parent_id, a);
      assert.equal((await one(api, 'companies', y)).parent_id, b);
    });

    it('api_assetqueue_manager_id must name a registered certificate whose scope contains the company', async () => {
      const own = await svc.certificate(top); // scope contains every new child of top
      const id = await create(api, 'companies', { name: 'Managed', data: { api_assetqueue_manager_id: own.info.id } });
      assert.deepEqual((await one(api, 'companies', id)).data, { api_assetqueue_manager_id: own.info.id });
      const elsewhere = await svc.certificate(other);
      const below = await svc.certificate(grandchild); // its scope does not contain a child of top
      const revoked = await svc.certificate(top);
      await revokeClient(svc.database, revoked.info.id);
      for (const value of [elsewhere.info.id, below.info.id, revoked.info.id, 999999, String(own.info.id), 1.5, null, { id: own.info.id }]) {
        expectError(await api.put('/3.0/companies', { name: 'x', data: { api_assetqueue_manager_id: value } }), 400, badData);
        expectError(await api.post(`/3.0/companies/id=${id}`, { data: { api_assetqueue_manager_id: value } }), 400, badData);
      }
      // A move that takes the company out of its approving system's scope is refused too.
      const branch = await create(api, 'companies', { name: 'Branch' });
      const branchCert = await svc.certificate(branch);
      const leaf = await create(api, 'companies', { name: 'Leaf', parent_id: branch, data: { api_assetqueue_manager_id: branchCert.info.id } });
      expectError(await api.post(`/3.0/companies/id=${leaf}`, { parent_id: top }), 400, badParent);
      assert.equal((await one(api, 'companies', leaf)).parent_id, branch);
      // A certificate of the company itself is fine.
      const target = await create(api, 'companies', { name: 'Self-managed' });
      const selfCert = await svc.certificate(target);
      assert.deepEqual(await update(api, `companies/id=${target}`, { data: { api_assetqueue_manager_id: selfCert.info.id } }),
        { records_updated: 1, records_found: 1 });
    });
  });
}
