// X-API-Result-Order and pagination over HTTPS on both engines,
// on the data set of test/support/filter-data.ts: assets 1–12 visible to A,
// departments 1–65 of A (data.grp = id % 3) and 66–68 of B.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { assertError, type FilterData, idsOf, range, startWithFilterData, stopService } from '../support/filter-data.ts';
import { DB_KINDS } from '../support/harness.ts';
import type { Inserted } from '../support/api.ts';

const ALL = range(1, 12);
const order = (header: string) => ({ headers: { 'X-API-Result-Order': header } });
const byGroup = (grp: number) => range(1, 65).filter((id) => id % 3 === grp);

/** [header, the ids in the order expected, path (default `assets`)]; 'malformed' is the 400 case. */
const ORDERS: readonly [string, readonly number[] | 'malformed', string?][] = [
  ['', ALL],
  ['id', ALL],
  ['id^', [...ALL].reverse()],
  ['assets.id^', [...ALL].reverse()],
  // NULL lowest: first ascending, last descending; equal values by id
  ['next_check', [4, 9, 10, 11, 7, 1, 12, 2, 3, 5, 6, 8]],
  ['next_check^', [8, 6, 5, 3, 2, 1, 12, 7, 4, 9, 10, 11]],
  ['assets.next_check^', [8, 6, 5, 3, 2, 1, 12, 7, 4, 9, 10, 11]],
  // several fields; strings by bytes ("Active" < "Retired" < "active")
  ['status,next_check^', [8, 6, 5, 1, 12, 7, 4, 9, 10, 11, 3, 2]],
  ['status^,id^', [2, 3, 12, 11, 10, 9, 8, 7, 6, 5, 4, 1]],
  ['period^,next_check', [1, 3, 4, 9, 10, 11, 7, 12, 2, 5, 6, 8]],
  ['description', [8, 2, 12, 11, 9, 3, 1, 10, 6, 5, 4, 7]],
  // relation fields, NULL (no location) lowest
  ['location.description', [4, 6, 8, 9, 10, 11, 3, 12, 1, 7, 2, 5]],
  ['location.description^', [5, 2, 7, 1, 12, 3, 4, 6, 8, 9, 10, 11]],
  ['location.creationdate', [4, 6, 8, 9, 10, 11, 5, 1, 12, 2, 3, 7]],
  ['company.name^,id^', [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]],
  ['company.data.region,id^', [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 12]],
  // a bare name that only one relation has means that relation's field
  ['name', ALL],
  ['name^', [12, ...range(1, 11)]],
  ['parent_id^', [12, ...range(1, 11)]],
  // JSON paths: null/missing < number < string < boolean < object/array
  ['data.mix', [4, 5, 6, 10, 1, 11, 2, 12, 9, 3, 7, 8]],
  // (the contract does not order objects and arrays among themselves: one of each list only)
  ['data.mix^', [7, 3, 9, 12, 2, 11, 1, 10, 4, 5, 6], 'assets/id!8'],
  ['data.cost', [4, 5, 6, 11, 8, 2, 1, 12, 7, 3, 9, 10]],
  ['data.cost^', [9, 3, 7, 1, 12, 2, 8, 4, 5, 6, 11], 'assets/id!10'],
  ['data.cat', [4, 5, 6, 3, 2, 8, 7, 1, 12, 11, 10, 9]],
  ['data.nested.a.b^,id^', [2, 1, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3]],
  // refused
  ['creationdate', 'malformed'], // both location and department have it
  ['foo', 'malformed'],
  ['files.id', 'malformed'],
  ['files', 'malformed'],
  ['filename', 'malformed'], // only the one-to-many files have it
  ['location', 'malformed'],
  ['next_check,bogus^', 'malformed'],
  ['next_check,,id', 'malformed'],
  ['id^^', 'malformed'],
  ['data.a-b', 'malformed'],
  ['company.parentcompany.name', 'malformed'],
  ['users.id', 'malformed'],
];

/** Every page of a list, checking each page's pagination block. */
async function allPages(client: TestClient, path: string, header: string, pages: number, total: number): Promise<number[]> {
  const out: number[] = [];
  for (let p = 1; p <= pages + 1; p++) {
    const res = await client.get(`/3.0/${path}/page=${p}`, order(header));
    const ids = idsOf(res);
    assert.deepEqual(res.envelope.pagination, { total_pages: pages, total_records: total });
    assert.equal(ids.length, p <= pages ? Math.min(30, total - (p - 1) * 30) : 0, `page ${p}`);
    out.push(...ids);
  }
  return out;
}

for (const kind of DB_KINDS) {
  describe(`ordering and paging (${kind})`, () => {
    let data: FilterData;
    before(async () => { data = await startWithFilterData(kind); });
    after(() => stopService(data.svc));

    for (const [header, expected, path = 'assets'] of ORDERS) {
      it(`GET ${path} X-API-Result-Order: ${header === '' ? '(empty)' : header}`, async () => {
        const res = await data.a.get(`/3.0/${path}`, order(header));
        if (expected === 'malformed') assertError(res, 400, 'malformed_order', `Malformed result ordering value: ${header}`);
        else assert.deepEqual(idsOf(res), expected);
      });
    }

    it('ordering applies together with filters, and the header is quoted as sent', async () => {
      assert.deepEqual(idsOf(await data.a.get('/3.0/assets/next_check!<NULL>', order('next_check^'))), [8, 6, 5, 3, 2, 1, 12, 7]);
      assert.deepEqual(idsOf(await data.a.get('/3.0/companies', order('parentcompany.name^'))), [3, 1]);
      assertError(await data.a.get('/3.0/assets/id>3', order('id, creationdate^')), 400, 'malformed_order',
        'Malformed result ordering value: id, creationdate^');
    });

    it('at most 32 distinct fields; a field named again counts once, and only its first occurrence orders', async () => {
      // 2,501 terms naming one field (SQLite would refuse an ORDER BY of that many): ordered by its first, descending.
      assert.deepEqual(idsOf(await data.a.get('/3.0/assets', order(`id^,${'id,'.repeat(2499)}assets.id`))), [...ALL].reverse());
      assert.deepEqual(idsOf(await data.a.get('/3.0/assets', order(`status^,${'assets.status,status,'.repeat(500)}id^`))),
        [2, 3, 12, 11, 10, 9, 8, 7, 6, 5, 4, 1]);
      const fields = (n: number) => ['status', ...range(1, n - 1).map((k) => `data.k${k}`)].join(',');
      assert.deepEqual(idsOf(await data.a.get('/3.0/assets', order(fields(32)))), [1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 3, 2]);
      assertError(await data.a.get('/3.0/assets', order(fields(33))), 400, 'malformed_order', `Malformed result ordering value: ${fields(33)}`);
      assertError(await data.a.get('/3.0/assets', order(`${fields(33)},status`)), 400, 'malformed_order',
        `Malformed result ordering value: ${fields(33)},status`);
    });

    it('the header is ignored on POST, PUT and DELETE', async () => {
      const bogus = order('no_such_field^');
      const post = await data.a.post('/3.0/assets/id=1', {}, bogus);
      assert.equal(post.status, 200, post.text);
      assert.deepEqual(post.envelope.response, { records_updated: 0, records_found: 1 });
      const put = await data.a.put('/3.0/externaltypes', { description: 'ordered' }, bogus);
      assert.equal(put.status, 201, put.text);
      const [id] = put.reply<Inserted>().ids;
      const del = await data.a.delete(`/3.0/externaltypes/id=${id}`, bogus);
      assert.equal(del.status, 200, del.text);
      assert.deepEqual(del.envelope.response, { records_deleted: 1, records_found: 1 });
    });

    it('30 records per page, page 1 by default, true totals of the scope', async () => {
      const first = await data.a.get('/3.0/departments');
      assert.deepEqual(idsOf(first), range(1, 30));
      assert.deepEqual(first.envelope.pagination, { total_pages: 3, total_records: 65 });
      assert.deepEqual(idsOf(await data.a.get('/3.0/departments/page=1')), range(1, 30));
      assert.deepEqual(idsOf(await data.a.get('/3.0/departments/page=2')), range(31, 60));
      assert.deepEqual(idsOf(await data.a.get('/3.0/departments/page=3')), range(61, 65));
      const b = await data.b.get('/3.0/departments');
      assert.deepEqual(idsOf(b), [66, 67, 68]);
      assert.deepEqual(b.envelope.pagination, { total_pages: 1, total_records: 3 });
    });

    it('a page past the end → 200, empty response, true totals', async () => {
      for (const path of ['departments/page=4', 'departments/page=1000', 'departments/page=9007199254740991']) {
        const res = await data.a.get(`/3.0/${path}`);
        assert.deepEqual(idsOf(res), [], path);
        assert.deepEqual(res.envelope.pagination, { total_pages: 3, total_records: 65 }, path);
      }
      const none = await data.a.get('/3.0/departments/id=0/page=2');
      assert.deepEqual(idsOf(none), []);
      assert.deepEqual(none.envelope.pagination, { total_pages: 0, total_records: 0 });
    });

    it('total_pages = ceil(total_records / 30) over the filtered result', async () => {
      const cases: readonly [string, number, number, readonly number[]][] = [
        ['departments/id=0', 0, 0, []],
        ['departments/id-1', 1, 1, [1]],
        ['departments/id-30', 1, 30, range(1, 30)],
        ['departments/id-31', 2, 31, range(1, 30)],
        ['departments/id-31/page=2', 2, 31, [31]],
        ['departments/id-60', 2, 60, range(1, 30)],
        ['departments/id-60/page=2', 2, 60, range(31, 60)],
        ['departments/id-60/page=3', 2, 60, []],
        ['departments/id>30/page=2', 2, 35, range(61, 65)],
        ['departments/page=2/id>30', 2, 35, range(61, 65)],
        ['departments/description~Dept+6', 1, 6, range(60, 65)],
        ['departments/data.grp=0', 1, 21, byGroup(0)],
      ];
      for (const [path, pages, total, ids] of cases) {
        const res = await data.a.get(`/3.0/${path}`);
        assert.deepEqual(idsOf(res), ids, path);
        assert.deepEqual(res.envelope.pagination, { total_pages: pages, total_records: total }, path);
      }
    });

    it('pages of an ordered list neither overlap nor skip (id breaks ties)', async () => {
      const desc = [...byGroup(2), ...byGroup(1), ...byGroup(0)];
      assert.deepEqual(await allPages(data.a, 'departments', 'data.grp^', 3, 65), desc);
      assert.deepEqual(await allPages(data.a, 'departments', 'data.grp', 3, 65), [...byGroup(0), ...byGroup(1), ...byGroup(2)]);
      assert.deepEqual(await allPages(data.a, 'departments', 'description^', 3, 65), range(1, 65).reverse());
      assert.deepEqual(await allPages(data.a, 'departments', 'company.name,data.grp^', 3, 65), desc);
      assert.deepEqual(await allPages(data.a, 'departments/id>10', 'data.grp^,id^', 2, 55),
        [...byGroup(2), ...byGroup(1), ...byGroup(0)].filter((id) => id > 10).sort((x, y) => (y % 3) - (x % 3) || y - x));
    });
  });
}
