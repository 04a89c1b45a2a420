// The asset tallies (migration 0012): the count of assets per company and
// `next_check` that a list filtered on `next_check` alone takes its total from.
// After any sequence of creates, updates (dates, checks recorded) and deletes
// through the API, and of writes by other hands (a statement moving assets to
// another company, one rewriting many dates), the tallies equal a GROUP BY of the
// assets, and every total a list answers from them equals the count of the records
// in the caller's scope.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { create, expectOk, start, stop } from './resources-support.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 20);
const DATES = ['2026-01-15', '2026-02-01', '2026-02-28', '2026-03-31', null] as const;

type Tally = readonly [company: number, day: string, n: number];
const byKey = (x: Tally, y: Tally) => x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);

async function stored(svc: Service): Promise<Tally[]> {
  const { rows } = await sql<{ c: number; d: string; n: number }>`SELECT company_id AS c, next_check AS d, n FROM asset_tallies`
    .execute(svc.database.db);
  return rows.map((r): Tally => [Number(r.c), r.d, Number(r.n)]).sort(byKey);
}

async function grouped(svc: Service): Promise<Tally[]> {
  const { rows } = await sql<{ c: number; d: string; n: number }>`SELECT company_id AS c, next_check AS d, COUNT(*) AS n FROM assets
    WHERE next_check IS NOT NULL GROUP BY company_id, next_check`.execute(svc.database.db);
  return rows.map((r): Tally => [Number(r.c), r.d, Number(r.n)]).sort(byKey);
}

type Edit =
  | { kind: 'create'; company: number; day: number }
  | { kind: 'date'; filter: number; day: number }
  | { kind: 'move'; filter: number; company: number }
  | { kind: 'rewrite'; filter: number; day: number }
  | { kind: 'check'; filter: number; day: number }
  | { kind: 'delete'; filter: number };

const day = fc.nat(DATES.length - 1);
const edits = fc.array(fc.oneof(
  fc.record({ kind: fc.constant('create' as const), company: fc.nat(1), day }),
  fc.record({ kind: fc.constant('date' as const), filter: fc.nat(), day }),
  fc.record({ kind: fc.constant('move' as const), filter: fc.nat(), company: fc.nat(1) }),
  fc.record({ kind: fc.constant('rewrite' as const), filter: fc.nat(), day }),
  fc.record({ kind: fc.constant('check' as const), filter: fc.nat(), day: fc.nat(DATES.length - 2) }),
  fc.record({ kind: fc.constant('delete' as const), filter: fc.nat() }),
), { minLength: 1, maxLength: 14 });

/** Filters of the writes, and of the totals checked: each compares `next_check` alone. */
const FILTERS = DATES.filter((d) => d !== null).flatMap((d) => [`next_check<${d}`, `next_check=${d}`, `next_check+${d}`,
  `next_check-${d}`, `next_check>${d}`]).concat(['next_check+2026-02-01/next_check<2026-03-31']);

const SQL_OPS: Readonly<Record<string, string>> = { '<': '<', '=': '=', '+': '>=', '-': '<=', '>': '>' };

/** One of FILTERS in SQL. */
const where = (filter: string) => sql.join(filter.split('/').map((part) => {
  const [, op, d] = /^next_check(.)(.*)$/.exec(part)!;
  return sql`next_check ${sql.raw(SQL_OPS[op!]!)} ${d}`;
}), sql` AND `);

for (const kind of DB_KINDS) {
  describe(`asset tallies (${kind})`, () => {
    let svc: Service;
    let companies: number[];
    let api: TestClient;
    let child: TestClient;
    before(async () => {
      svc = await start(kind);
      const root = await svc.company('Tally root');
      api = (await svc.certificate(root)).client;
      companies = [root, await create(api, 'companies', { name: 'tally child', parent_id: root })];
      child = (await svc.certificate(companies[1]!)).client;
    });
    after(() => stop(svc));

    it('equal a GROUP BY of the assets after random writes, and every total counted from them is the count of the records', async () => {
      let serial = 0;
      await fc.assert(fc.asyncProperty(edits, async (plan: Edit[]) => {
        for (const e of plan) {
          const filter = e.kind === 'create' ? '' : FILTERS[e.filter % FILTERS.length]!;
          if (e.kind === 'create') {
            await create(api, 'assets', { asset_no: `t${++serial}`, company_id: companies[e.company], next_check: DATES[e.day] });
          } else if (e.kind === 'delete') {
            expectOk(await api.delete(`/3.0/assets/${filter}`));
          } else if (e.kind === 'date' || e.kind === 'check') {
            expectOk(await api.post(`/3.0/assets/${filter}`, e.kind === 'date' ? { next_check: DATES[e.day] } : { last_check: DATES[e.day], period: 1 }));
          } else {
            // Not through the API (which never moves an asset): one statement over the matched rows, as the CLI or an operator would.
            const set = e.kind === 'move' ? sql`company_id = ${companies[e.company]}` : sql`next_check = ${DATES[e.day]}`;
            await sql`UPDATE assets SET ${set} WHERE ${where(filter)}`.execute(svc.database.db);
          }
        }
        assert.deepEqual(await stored(svc), await grouped(svc));
        // The parent's certificate counts both companies' assets; the child's, its own alone.
        for (const [client, scope] of [[api, companies], [child, companies.slice(1)]] as const) {
          for (const filter of FILTERS) {
            const res = await client.get(`/3.0/assets/${filter}`);
            const { rows } = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM assets WHERE company_id IN (${sql.join(scope)})
              AND ${where(filter)}`.execute(svc.database.db);
            assert.equal(res.envelope.pagination!.total_records, Number(rows[0]!.n), filter);
          }
        }
      }), { numRuns: RUNS });
    });

    it('keep no row for a date no asset has any more', async () => {
      const id = await create(api, 'assets', { asset_no: 'only one', company_id: companies[1], next_check: '2031-07-07' });
      const row = async () => (await stored(svc)).filter(([c, d]) => c === companies[1] && d === '2031-07-07');
      assert.deepEqual(await row(), [[companies[1], '2031-07-07', 1]]);
      expectOk(await api.post(`/3.0/assets/id=${id}`, { next_check: '2031-07-08' }));
      assert.deepEqual(await row(), []);
      expectOk(await api.delete(`/3.0/assets/id=${id}`));
      assert.deepEqual(await stored(svc), await grouped(svc));
    });
  });
}
