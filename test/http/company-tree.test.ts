// The company tree as data: the closure table every scope is read from
// stays equal to a recursive walk of `companies.parent_id` after any sequence of
// creates, moves and deletes through the API, cycles stay refused, and requests
// running while a company moves see it in one tree or the other, never a mix.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { create, expectError, expectOk, stop, update } from './resources-support.ts';
import type { Asset } from '../support/api.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 20);

type Pair = readonly [ancestor: number, descendant: number, depth: number];

/** The closure as the tree says it should be: every company with each of its ancestors (itself at depth 0). */
async function walked(svc: Service): Promise<Pair[]> {
  const { rows } = await sql<{ id: number; parent_id: number | null }>`SELECT id, parent_id FROM companies`.execute(svc.database.db);
  const parent = new Map(rows.map((r) => [Number(r.id), r.parent_id === null ? null : Number(r.parent_id)]));
  const pairs: Pair[] = [];
  for (const id of parent.keys()) {
    let depth = 0;
    for (let at: number | null = id; at !== null; at = parent.get(at) ?? null) pairs.push([at, id, depth++]);
  }
  return pairs.sort(byPair);
}

async function stored(svc: Service): Promise<Pair[]> {
  const { rows } = await sql<{ a: number; d: number; depth: number }>`SELECT ancestor_id AS a, descendant_id AS d, depth
    FROM company_closure`.execute(svc.database.db);
  return rows.map((r): Pair => [Number(r.a), Number(r.d), Number(r.depth)]).sort(byPair);
}

/** The same walk in SQL, so the check does not rest on the JS walk alone. */
async function recursive(svc: Service): Promise<Pair[]> {
  const { rows } = await sql<{ a: number; d: number; depth: number }>`WITH RECURSIVE up(a, d, depth) AS (
      SELECT id, id, 0 FROM companies UNION ALL SELECT c.parent_id, up.d, up.depth + 1 FROM up JOIN companies c ON c.id = up.a
      WHERE c.parent_id IS NOT NULL) SELECT a, d, depth FROM up`.execute(svc.database.db);
  return rows.map((r): Pair => [Number(r.a), Number(r.d), Number(r.depth)]).sort(byPair);
}

const byPair = (x: Pair, y: Pair) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2];

type Edit = { kind: 'create'; parent: number } | { kind: 'move'; company: number; parent: number } | { kind: 'delete'; company: number };

const edits = fc.array(fc.oneof(
  fc.record({ kind: fc.constant('create' as const), parent: fc.nat() }),
  fc.record({ kind: fc.constant('move' as const), company: fc.nat(), parent: fc.nat() }),
  fc.record({ kind: fc.constant('delete' as const), company: fc.nat() }),
), { minLength: 1, maxLength: 12 });

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length]!;

for (const kind of DB_KINDS) {
  describe(`company closure (${kind})`, () => {
    let svc: Service;
    let root: number;
    let api: TestClient;
    before(async () => { ({ svc, top: root, api } = await buildTenancy(kind, { top: 'Closure root' })); });
    after(() => stop(svc));

    it('equals the recursive walk of parent_id after random creates, moves and deletes through the API', async () => {
      await fc.assert(fc.asyncProperty(edits, async (plan: Edit[]) => {
        const companies = [root];
        for (const e of plan) {
          if (e.kind === 'create') {
            companies.push(await create(api, 'companies', { name: `c${companies.length}`, parent_id: pick(companies, e.parent) }));
          } else if (e.kind === 'move') {
            const company = pick(companies, e.company);
            const res = await api.post(`/3.0/companies/id=${company}`, { parent_id: pick(companies, e.parent) });
            // Refused: the top of the scope, or a cycle (under itself or a descendant).
            if (res.status !== 200) expectError(res, 400, 'Field verification failed, invalid value for parent_id');
          } else {
            const company = pick(companies, e.company);
            const res = await api.delete(`/3.0/companies/id=${company}`);
            // Refused while it still has children, or as the top of the scope.
            if (res.status === 200) companies.splice(companies.indexOf(company), 1);
            else assert.equal(res.status, 409, res.text);
          }
        }
        const expected = await walked(svc);
        assert.deepEqual(await stored(svc), expected);
        assert.deepEqual(await recursive(svc), expected);
      }), { numRuns: RUNS });
    });

    it('refuses a move under the company itself or under its descendant, and the closure stays', async () => {
      const a = await create(api, 'companies', { name: 'cycle a', parent_id: root });
      const b = await create(api, 'companies', { name: 'cycle b', parent_id: a });
      const before = await stored(svc);
      for (const parent of [a, b]) {
        expectError(await api.post(`/3.0/companies/id=${a}`, { parent_id: parent }), 400, 'Field verification failed, invalid value for parent_id');
      }
      assert.deepEqual(await stored(svc), before);
    });

    it('requests running while a company moves between trees see it in one tree or the other', async () => {
      // top ─ A ─ X (with assets)   top ─ B
      const top = await create(api, 'companies', { name: 'mover top', parent_id: root });
      const a = await create(api, 'companies', { name: 'mover A', parent_id: top });
      const b = await create(api, 'companies', { name: 'mover B', parent_id: top });
      const x = await create(api, 'companies', { name: 'mover X', parent_id: a });
      const clientA = (await svc.certificate(a)).client;
      const clientB = (await svc.certificate(b)).client;
      const ownA = await create(clientA, 'assets', { asset_no: 'in A' });
      const ownB = await create(clientB, 'assets', { asset_no: 'in B' });
      const inX: number[] = [];
      for (let i = 0; i < 5; i++) inX.push(await create(clientA, 'assets', { asset_no: `in X ${i}`, company_id: x }));
      const allowed = (own: number) => [[own], [own, ...inX]].map((ids) => JSON.stringify(ids));
      let moving = true;
      const seen = { a: new Set<string>(), b: new Set<string>() };
      const watch = async (client: TestClient, own: number, into: Set<string>) => {
        while (moving) {
          const res = await client.get('/3.0/assets');
          const ids = expectOk<Asset[]>(res).map((r) => r.id);
          assert.ok(allowed(own).includes(JSON.stringify(ids)), `a mix of trees: ${JSON.stringify(ids)}`);
          for (const r of res.reply<Asset[]>()) assert.ok(r.company_id === x || r.company_id === (own === ownA ? a : b), res.text);
          into.add(JSON.stringify(ids));
        }
      };
      const watchers = [watch(clientA, ownA, seen.a), watch(clientB, ownB, seen.b)];
      for (let i = 0; i < 10; i++) {
        assert.deepEqual(await update(api, `companies/id=${x}`, { parent_id: i % 2 === 0 ? b : a }), { records_updated: 1, records_found: 1 });
        await new Promise((r) => setTimeout(r, 5));
      }
      moving = false;
      await Promise.all(watchers);
      // X ended under A: A sees it again, B no longer does.
      assert.deepEqual(expectOk<Asset[]>(await clientA.get('/3.0/assets')).map((r: { id: number }) => r.id), [ownA, ...inX]);
      assert.deepEqual(expectOk<Asset[]>(await clientB.get('/3.0/assets')).map((r: { id: number }) => r.id), [ownB]);
      assert.ok(seen.a.size >= 1 && seen.b.size >= 1);
      assert.deepEqual(await stored(svc), await walked(svc));
    });
  });
}
