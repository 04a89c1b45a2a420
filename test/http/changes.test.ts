// The change feed: every create, update and delete in scope, in seq
// order, as the record shows on GET without embeds; a session sees the changes of
// the records it may GET; pruned cursors answer 410.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { addCompany, addUser } from '../../src/admin/accounts.ts';
import { pruneChanges } from '../../src/feed/prune.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { login, user } from '../support/workflows.ts';
import { create, expectError, expectOk, one, stop, USER_FIELDS } from './resources-support.ts';
import type { Change, Inserted } from '../support/api.ts';

const CHANGE_FIELDS = ['seq', 'endpoint', 'record_id', 'op', 'changed', 'company_id', 'data'];

for (const kind of DB_KINDS) {
  describe(`change feed (${kind})`, () => {
    let svc: Service;
    let api: TestClient, childApi: TestClient, siblingApi: TestClient, imp: TestClient;
    let top: number, child: number, sibling: number;

    before(async () => {
      ({ svc, top, child, api } = await buildTenancy(kind, { child: 'Child' }));
      sibling = await svc.company('Sibling');
      childApi = (await svc.certificate(child)).client;
      siblingApi = (await svc.certificate(sibling)).client;
      imp = (await svc.certificate(top, { impersonation: true })).client;
    });
    after(() => stop(svc));

    /** Every change after `seq` the client sees, reading `seq>N` page by page as a syncing client would. */
    const follow = async (client: TestClient, seq: number, headers: Record<string, string> = {}): Promise<Change[]> => {
      const out: Change[] = [];
      for (let n = seq; ;) {
        const page = expectOk<Change[]>(await client.get(`/3.0/changes/seq>${n}`, { headers }));
        if (page.length === 0) return out;
        out.push(...page);
        n = page.at(-1)!.seq;
      }
    };
    const head = async () => Number((await sql<{ s: number | null }>`SELECT MAX(seq) AS s FROM events`.execute(svc.database.db)).rows[0]?.s ?? 0);

    it('create, update and delete: one change each, in order, the record as GET shows it without embeds', async () => {
      const mark = await head();
      const id = await create(api, 'locations', { description: 'Lab', company_id: child, data: { floor: 1 } });
      const { company: _c, ...created } = await one(api, 'locations', id);
      expectOk(await api.post(`/3.0/locations/id=${id}`, { description: 'Lab 2' }));
      const { company: _u, ...updated } = await one(api, 'locations', id);
      // A POST that changes nothing makes no change record.
      expectOk(await api.post(`/3.0/locations/id=${id}`, { description: 'Lab 2' }));
      expectOk(await api.delete(`/3.0/locations/id=${id}`));
      const changes = await follow(api, mark);
      assert.deepEqual(changes.map((c) => [c.endpoint, c.record_id, c.op, c.company_id]),
        [['locations', id, 'created', child], ['locations', id, 'updated', child], ['locations', id, 'deleted', child]]);
      for (const c of changes) assert.deepEqual(Object.keys(c), CHANGE_FIELDS);
      assert.deepEqual(changes.map((c) => c.data), [created, updated, updated]);
      assert.ok(changes.every((c, i) => i === 0 || c.seq > changes[i - 1]!.seq));
      assert.match(changes[0]!.changed, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    });

    it('a queue transition is an update, not a change of its own; a company shows its own id', async () => {
      const mark = await head();
      const q = await create(api, 'assetqueue', { description: 'In', asset_no: `Q-${kind}` });
      expectOk(await api.post(`/3.0/assetqueue/id=${q}`, { released: 2 }));
      const company = await create(api, 'companies', { name: 'Grandchild', parent_id: child });
      const changes = await follow(api, mark);
      assert.deepEqual(changes.map((c) => [c.endpoint, c.op]), [['assetqueue', 'created'], ['assetqueue', 'updated'], ['companies', 'created']]);
      assert.equal(changes[2]!.company_id, company);
      assert.equal(changes[2]!.record_id, company);
    });

    it('changes made by the operator (CLI) are in the feed too', async () => {
      const mark = await head();
      const company = await addCompany(svc.database, 'By CLI', top);
      const u = await addUser(svc.database, { companyId: company, username: `cli-${kind}`, email: 'cli@example.com' }, svc.clock);
      const changes = await follow(api, mark);
      assert.deepEqual(changes.map((c) => [c.endpoint, c.record_id, c.op]), [['companies', company, 'created'], ['users', u, 'created']]);
      assert.deepEqual(Object.keys(changes[1]!.data), USER_FIELDS, 'the user as GET shows it: no hash, no token');
    });

    it('filters and paging like every list; the sibling and the child company see only their own', async () => {
      const mark = await head();
      const ids: number[] = [];
      for (let i = 0; i < 35; i++) ids.push(await create(api, 'departments', { description: `D${i}`, company_id: i % 2 ? child : top }));
      const page1 = expectOk<Change[]>(await api.get(`/3.0/changes/seq>${mark}/endpoint=departments`));
      assert.equal(page1.length, 30);
      const r = await api.get(`/3.0/changes/seq>${mark}/endpoint=departments/page=2`);
      assert.deepEqual(r.envelope.pagination, { total_pages: 2, total_records: 35 });
      assert.deepEqual([...page1, ...r.reply<Change[]>()].map((c) => c.record_id), ids);
      assert.deepEqual(expectOk<Change[]>(await api.get(`/3.0/changes/endpoint=departments/record_id=${ids[3]}/op=created`)).map((c) => c.record_id), [ids[3]]);
      const mine = await follow(childApi, mark);
      assert.deepEqual(mine.map((c) => c.record_id), ids.filter((_, i) => i % 2));
      assert.ok(mine.every((c) => c.company_id === child));
      assert.deepEqual(await follow(siblingApi, mark), []);
      const theirs = await create(siblingApi, 'departments', { description: 'theirs' });
      assert.deepEqual((await follow(api, mark)).filter((c) => c.record_id === theirs && c.endpoint === 'departments'), []);
    });

    it('a session sees the changes of what its user may GET: webhooks for admins only, messages addressed to the user', async () => {
      const [reader, admin, other] = [await user(svc, top, { level: 'readonly' }), await user(svc, top, { level: 'admin' }), await user(svc, top)];
      const [asReader, asAdmin] = [await login(imp, reader), await login(imp, admin)];
      const mark = await head();
      expectOk(await api.put('/3.0/webhooks', { url: 'https://example.com/hook', events: ['*'] }), 201);
      const toReader = await create(api, 'messages', { messagetext: 'to reader', target_user_id: reader.id });
      const toOther = await create(api, 'messages', { messagetext: 'to other', target_user_id: other.id });
      const toAll = await create(api, 'messages', { messagetext: 'to the company' });
      const later = await create(api, 'messages', { messagetext: 'not yet', date_range_start: '2999-01-01' });
      const seen = (list: Change[]) => list.map((c) => `${c.endpoint} ${c.record_id}`);
      assert.deepEqual(seen(await follow(imp, mark, asReader)), [`messages ${toReader}`, `messages ${toAll}`]);
      const all = await follow(api, mark);
      assert.deepEqual(seen(await follow(imp, mark, asAdmin)), seen(all.filter((c) => c.endpoint === 'webhooks' || c.record_id === toAll)));
      assert.ok(seen(all).includes(`messages ${toOther}`) && seen(all).includes(`messages ${later}`));
      assert.ok(!JSON.stringify(all).includes('whsec_'), 'no webhook secret in the feed');
    });

    it('pruned changes: a cursor below them answers 410, one at or above them reads on; pending deliveries keep theirs', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push(await create(api, 'departments', { description: `old ${i}` }));
      const changes = (await follow(api, 0)).filter((c) => c.endpoint === 'departments' && ids.includes(c.record_id!));
      const [first, second, third] = changes.map((c) => c.seq);
      // Everything up to the second change is old; the third is recent. A webhook delivery still waits on the first.
      await sql`UPDATE events SET created = '2000-01-01 00:00:00' WHERE seq <= ${second}`.execute(svc.database.db);
      const hook = expectOk<Inserted>(await api.put('/3.0/webhooks', { url: 'https://example.com/hook', events: ['*'] }), 201).ids[0]!;
      await sql`INSERT INTO webhook_deliveries (webhook_id, company_id, event_seq, event_id, event, status, created, modified)
        SELECT ${hook}, ${top}, seq, event_id, event, 'pending', created, created FROM events WHERE seq = ${first}`.execute(svc.database.db);
      const pruned = await pruneChanges(svc.database, 30, svc.clock.now());
      assert.ok(pruned.deleted >= 2);
      assert.equal(pruned.through, second);
      const kept = await sql<{ seq: number }>`SELECT seq FROM events WHERE seq <= ${second}`.execute(svc.database.db);
      assert.deepEqual(kept.rows.map((r) => Number(r.seq)), [first], 'only the event a delivery waits on is kept');
      expectError(await api.get(`/3.0/changes/seq>${second! - 1}`), 410, `Cursor ${second! - 1} is older than the retained changes; resynchronise`);
      expectError(await api.get(`/3.0/changes/seq>=${second}`), 410, `Cursor ${second} is older than the retained changes; resynchronise`);
      assert.equal((await follow(api, second!)).find((c) => c.endpoint === 'departments')?.seq, third);
      // Pruning again changes nothing; the count of the first run is not repeated.
      assert.deepEqual(await pruneChanges(svc.database, 30, svc.clock.now()), { deleted: 0, through: second });
    });
  });
}
