// Filters on JSON paths, relations and datetimes executed over HTTPS against both
// engines: JSON number-vs-text rules, NULL and missing keys,
// `relation.field`, date-part comparison of datetimes, and the company scope.
// Data: test/support/filter-data.ts.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { filterTable, idsOf, invalid, range, type Row } from '../support/filter-data.ts';

const ALL = range(1, 12);
const except = (...ids: number[]) => ALL.filter((id) => !ids.includes(id));

// data.cost: 1 → 10, 2 → 9.5, 3 → "10", 4 → (data NULL), 5 → (missing), 6 → null, 7 → 100,
// 8 → -1, 9 → [1], 10 → {"x":1}, 11 → (missing), 12 → 10
const json: readonly Row[] = [
  // a number compares numerically with stored numbers, as text with stored strings
  ['assets/data.cost=10', [1, 3, 12]],
  ['assets/data.cost=10.0', [1, 12]],
  ['assets/data.cost=1e1', [1, 12]],
  ['assets/data.cost>9.5', [1, 7, 12]],
  ['assets/data.cost<10', [2, 8]],
  ['assets/data.cost+10', [1, 3, 7, 12]],
  ['assets/data.cost-9.5', [2, 3, 8]], // "10" <= "9.5" as text
  ['assets/data.cost>=10', [1, 3, 7, 12]],
  // `!` matches null and missing keys too; objects and arrays never match
  ['assets/data.cost!10', [2, 4, 5, 6, 7, 8, 11]],
  ['assets/data.cost=<NULL>', [4, 5, 6, 11]],
  ['assets/data.cost!<NULL>', [1, 2, 3, 7, 8, 9, 10, 12]],
  // `~` searches the text, of containers too
  ['assets/data.cost~1', [1, 3, 7, 8, 9, 10, 12]],
  ['assets/data.cost~%22x%22', [10]],
  // a value that is not a JSON number compares as text with every scalar, numbers included
  ['assets/data.cost<a', [1, 2, 3, 7, 8, 12]],
  ['assets/data.cost>a', []],
  // numbers as written: 2 → "100", 7 → 100, 11 → 1e2
  ['assets/data.big=100', [2, 7, 11]],
  ['assets/data.big=1e2', [7, 11]],
  ['assets/data.big>99.5', [7, 11]],
  ['assets/data.big~1e2', [11]],
  // data.cat: 1 → "alpha", 2 → "Beta", 3 → "10", 6 → null, 7 → "abc", 8 → "Zeta", 9 → true,
  // 10 → false, 11 → "alpha beta", 12 → "alpha"; strings compare by bytes, booleans as true/false
  ['assets/data.cat=alpha', [1, 12]],
  ['assets/data.cat=alpha+beta', [11]],
  ['assets/data.cat=ALPHA', []],
  ['assets/data.cat~ALPHA', [1, 11, 12]],
  ['assets/data.cat=true', [9]],
  ['assets/data.cat=false', [10]],
  ['assets/data.cat=10', [3]],
  ['assets/data.cat>Zeta', [1, 7, 9, 10, 11, 12]],
  ['assets/data.cat<B', [3]],
  ['assets/data.cat!alpha', range(2, 11)],
  ['assets/data.cat~e', [2, 8, 9, 10, 11]],
  // data.flag: 1 → true, 2 → false, 3 → "true", 6 → null
  ['assets/data.flag=true', [1, 3]],
  ['assets/data.flag=1', []],
  ['assets/data.flag!true', except(1, 3)],
  // nested: 1 → {"a":{"b":5}}, 2 → {"a":{"b":"5"}}, 7 → [1,2]
  ['assets/data.nested.a.b=5', [1, 2]],
  ['assets/data.nested.a.b>4', [1, 2]],
  ['assets/data.nested.a.b>10', [2]], // "5" > "10" as text
  ['assets/data.nested.a=5', []],
  ['assets/data.nested.a!5', range(3, 12)],
  ['assets/data.nested~%22b%22:5', [1]],
  ['assets/data.nested=<NULL>', [3, 4, 5, 6, 8, 9, 10, 11, 12]],
  ['assets/data.nested.a.b=<NULL>', range(3, 12)],
  // arrays are not objects: a key path never indexes them
  ['assets/data.tags~x', [1, 8]],
  ['assets/data.tags=x', []],
  ['assets/data.tags.0=x', []],
  ['assets/data.tags.x=1', [8]],
  ['assets/data.$hidden=h1', [1]],
  ['assets/assets.data.big=100', [2, 7, 11]],
  // the whole field
  ['assets/data=<NULL>', [4]],
  ['assets/data!<NULL>', except(4)],
  ['assets/data~alpha', [1, 11, 12]],
  ['assets/data~%22mix%22:%22%22', [11]],
  ['assets/data.cat-b=1', [1, 2, 3, 7, 8, 11, 12]], // a `-` ends the key: data.cat <= "b=1"
  ['assets/data.a%20b=1', invalid('data.a%20b=1')],
  ['assets/data.%C3%A4=1', invalid('data.%C3%A4=1')],
  ['assets/data..a=1', invalid('data..a=1')],
  ['assets/data.cost><NULL>', invalid('data.cost><NULL>')],
];

const relations: readonly Row[] = [
  // locations: 1 "Main Lab" (assets 1), 2 "store_room 100%" (2), 3 "Back\Office" (3), 4 "ÄRZTE zimmer" (5),
  // 5 "storeXroom 1000 percent" (7), 7 "Child Lab" of C (12); B's location 6 is also "Main Lab"
  ['assets/location.description=Main+Lab', [1]],
  ['assets/location.description~lab', [1, 12]],
  ['assets/location.description!Main+Lab', except(1)],
  ['assets/location.description=<NULL>', [4, 6, 8, 9, 10, 11]],
  ['assets/location.description~%C3%A4rzte', []],
  ['assets/location.description~%C3%84rzte', [5]],
  ['assets/location.description~_room', [2]],
  ['assets/location.creationdate=2017-10-09', [1, 2, 12]],
  ['assets/location.id>4', [7, 12]],
  ['assets/company.name=Acme', range(1, 11)],
  ['assets/company.name=Acme+Child', [12]],
  ['assets/company.name~child', [12]],
  ['assets/company.id=3', [12]],
  ['assets/company.data.region=south', [12]],
  ['assets/company.data.region=north', range(1, 11)],
  ['assets/company.data.tier>1', range(1, 11)],
  ['assets/company.data.tier=<NULL>', [12]],
  ['assets/externaltype.id=<NULL>', ALL],
  ['assets/externaltype.description!x', ALL],
  ['assets/department.id!<NULL>', []],
  ['assets/company.parentcompany.name=Acme', invalid('company.parentcompany.name=Acme')],
  ['assets/files.description=x', invalid('files.description=x')],
  ['locations/company.name=Acme+Child', [7]],
  // companies: A sees 1 and its child 3; for C, its parent A is outside the scope and reads as NULL
  ['companies', [1, 3]],
  ['companies/parentcompany.name=Acme', [3]],
  ['companies/parentcompany.name=<NULL>', [1]],
  ['companies/parentcompany.id=1', [3]],
  ['companies/data.region=north', [1]],
  ['companies/name~acme', [1, 3]],
  ['companies/parentcompany.name=Acme', [], 'c'],
  ['companies/parentcompany.name=<NULL>', [3], 'c'],
  ['companies/parent_id=1', [3], 'c'],
  ['companies/parentcompany.name!Acme', [3], 'c'],
  ['assets', [12], 'c'],
  ['assets/company.name=Acme', [], 'c'],
  ['assets', [13], 'b'],
  ['assets/data.cost=10', [13], 'b'],
  ['assets/location.description=Main+Lab', [13], 'b'],
];

// locations creationdate: 1 2017-10-09 08:00:00, 2 2017-10-09 23:59:59, 3 2017-10-10 00:00:00,
// 4 2017-10-08 12:00:00, 5 2017-11-01 00:00:00, 7 (of C) 2017-10-09 09:00:00; B's 6 2017-10-09 10:00:00.
// assetqueue requested_date: 1 2017-10-09 00:00:00, 2 2017-10-09 23:59:59, 3 2017-10-10 00:00:00,
// 4 2017-10-08 23:59:59; B's 5 2017-10-09 12:00:00.
const datetimes: readonly Row[] = [
  ['locations/creationdate=2017-10-09', [1, 2, 7]],
  ['locations/creationdate>2017-10-09', [3, 5]],
  ['locations/creationdate<2017-10-09', [4]],
  ['locations/creationdate+2017-10-09', [1, 2, 3, 5, 7]],
  ['locations/creationdate-2017-10-09', [1, 2, 4, 7]],
  ['locations/creationdate!2017-10-09', [3, 4, 5]],
  ['locations/creationdate=2017-10-09+08:00:00', [1]],
  ['locations/creationdate=2017-10-09%2008:00:00', [1]],
  ['locations/creationdate>2017-10-09+08:00:00', [2, 3, 5, 7]],
  ['locations/creationdate-2017-10-09+09:00:00', [1, 4, 7]],
  ['locations/creationdate~2017-10-09', [1, 2, 7]],
  ['locations/creationdate~23:59', [2]],
  ['locations/creationdate=<NULL>', []],
  ['locations/creationdate=2017-10-09T08:00:00', invalid('creationdate=2017-10-09T08:00:00')],
  ['locations/creationdate=2017-10-09%2B08:00:00', invalid('creationdate=2017-10-09%2B08:00:00')],
  ['locations/creationdate>2017-02-29', invalid('creationdate>2017-02-29')],
  ['locations/description~%C3%A4rzte', []],
  ['locations/description~%C3%84RZTE', [4]],
  ['locations/description~%C3%84rzte', [4]],
  ['locations/description~_room', [2]],
  ['locations/description~_', [2]],
  ['locations/description~100%25', [2]],
  ['locations/description~%25', [2]],
  ['locations/description~k%5CO', [3]],
  ['locations/description~%5C', [3]],
  ['locations/description<Main+Lab', [3, 7]],
  ['locations/description>store_room', [2, 4]],
  ['locations/description=Main+Lab', [1]],
  ['assetqueue/requested_date=2017-10-09', [1, 2]],
  ['assetqueue/requested_date>2017-10-09', [3]],
  ['assetqueue/requested_date<2017-10-09', [4]],
  ['assetqueue/requested_date+2017-10-09', [1, 2, 3]],
  ['assetqueue/requested_date-2017-10-09', [1, 2, 4]],
  ['assetqueue/requested_date!2017-10-09', [3, 4]],
  ['assetqueue/requested_date=2017-10-09+23:59:59', [2]],
  ['assetqueue/requested_date>2017-10-09+00:00:00', [2, 3]],
  ['assetqueue/requested_date<2017-10-09+00:00:00', [4]],
  ['assetqueue/requested_date+2017-10-09+00:00:00', [1, 2, 3]],
  ['assetqueue/requested_date!2017-10-09+00:00:00', [2, 3, 4]],
  ['assetqueue/requested_date%2B=2017-10-10', [3]],
  ['assetqueue/requested_date~10-09', [1, 2]],
  ['assetqueue/requested_date>2017-10-08/requested_date<2017-10-10', [1, 2]],
  ['assetqueue/requested_date=2017-10-09', [5], 'b'],
];

filterTable('filters on JSON, relations and datetimes', [...json, ...relations, ...datetimes], (data) => {
  it('POST with each filter on an embedded record changes exactly the records GET lists with it', async () => {
    const { a } = data();
    let mark = 0;
    for (const [path, expected, as = 'a'] of relations) {
      if (as !== 'a' || 'invalid' in expected || !path.includes('/')) continue;
      const endpoint = path.slice(0, path.indexOf('/'));
      // Earlier POSTs replace `data`, so what GET lists now is the truth to match.
      const listed = idsOf(await a.get(`/3.0/${path}`));
      const res = await a.post(`/3.0/${path}`, { data: { mark: ++mark } });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.deepEqual(res.envelope.response, { records_updated: listed.length, records_found: listed.length }, path);
      assert.deepEqual(idsOf(await a.get(`/3.0/${endpoint}/data.mark=${mark}`)), listed, path);
    }
  });
});
