// Filters on plain columns executed over HTTPS against both engines:
// every operator on string, integer and date fields, NULL semantics, `~`,
// the PHP client's encodings, refusals, the segment limit and verbs.
// The data set is test/support/filter-data.ts: assets 1–11 of A, 12 of its child C
// (both visible to A's certificate), 13 of B (never visible to A).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertError, filterTable, idsOf, invalid, range, type Row } from '../support/filter-data.ts';

const ALL = range(1, 12);
const except = (...ids: number[]) => ALL.filter((id) => !ids.includes(id));
const ACTIVE = except(2, 3); // status is exactly "Active"

const rows: readonly Row[] = [
  ['assets', ALL],
  // string: = ! < > + - compare exactly, by bytes ("Active" < "Retired" < "active")
  ['assets/status=Active', ACTIVE],
  ['assets/status=active', [2]],
  ['assets/status!Active', [2, 3]],
  ['assets/status!=Active', [2, 3]],
  ['assets/status>Active', [2, 3]],
  ['assets/status<Retired', ACTIVE],
  ['assets/status+Retired', [2, 3]],
  ['assets/status>=Retired', [2, 3]],
  ['assets/status-Active', ACTIVE],
  ['assets/status<=Active', ACTIVE],
  ['assets/asset_no>A-010', [11, 12]],
  ['assets/description=calib+set', []],
  ['assets/serial_no=', except(1, 2)],
  ['assets/serial_no!', [1, 2]],
  // `~`: contains, ASCII letters folded only, `%` `_` `\` literal
  ['assets/status~ACTIVE', except(3)],
  ['assets/status~tire', [3]],
  ['assets/asset_no~a-00', range(1, 9)],
  ['assets/description~scale', [1, 12]],
  ['assets/description~SCALE+10', [1]],
  ['assets/description~_score', [5]],
  ['assets/description~100%25', [5]],
  ['assets/description~%25', [5]],
  ['assets/description~k%5Cs', [7]],
  ['assets/description~k\\s', [7]],
  ['assets/description~caf%C3%A9', [8]],
  ['assets/description~CAF%C3%A9', [8]],
  ['assets/description~CAF%C3%89', []],
  ['assets/description~%C3%89', []],
  // `+` is a space in a value, `%2B` a plus
  ['assets/description=Calib+Set', [2]],
  ['assets/description=Calib%20Set', [2]],
  ['assets/serial_no=S%2B1', [2]],
  ['assets/serial_no=S+1', []],
  ['assets/serial_no=SN+100', [1]],
  // integers
  ['assets/id=3', [3]],
  ['assets/id>10', [11, 12]],
  ['assets/id<3', [1, 2]],
  ['assets/id!3', except(3)],
  ['assets/id~12', [12]],
  ['assets/id~1', [1, 10, 11, 12]],
  ['assets/id+11', [11, 12]],
  ['assets/id-2', [1, 2]],
  ['assets/id!=3', except(3)],
  ['assets/id>=11', [11, 12]],
  ['assets/id+=11', [11, 12]],
  ['assets/id<=2', [1, 2]],
  ['assets/id-=2', [1, 2]],
  ['assets/id=13', []], // B's asset: out of scope
  ['assets/id=9007199254740991', []],
  ['assets/id=-9007199254740991', []],
  ['assets/id>-9007199254740991', ALL],
  ['assets/period=12', [1]],
  ['assets/period!12', except(1)], // `!` also matches NULL
  ['assets/period<12', [3]], // never NULL
  ['assets/period>0', [1, 3]],
  ['assets/period~2', [1]],
  ['assets/period~', [1, 3]], // an empty `~` matches every value, never NULL
  ['assets/period=<NULL>', except(1, 3)],
  ['assets/period!<NULL>', [1, 3]],
  ['assets/location_id=1', [1]],
  ['assets/location_id!1', except(1)],
  ['assets/location_id>3', [5, 7, 12]],
  ['assets/company_id=3', [12]],
  ['assets/company_id=2', []],
  ['assets/company_id!1', [12]],
  // dates (next_check: 1 and 12 2017-10-09, 2 2017-10-31, 3 2018-01-01, 5 2019-01-01,
  // 6 2019-01-02, 7 2016-02-29, 8 2020-06-15, the rest NULL)
  ['assets/next_check=2017-10-09', [1, 12]],
  ['assets/next_check>2018-01-01', [5, 6, 8]],
  ['assets/next_check<2017-10-31', [1, 7, 12]],
  ['assets/next_check+2018-01-01', [3, 5, 6, 8]],
  ['assets/next_check-2017-10-09', [1, 7, 12]],
  ['assets/next_check!2017-10-09', [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]],
  ['assets/next_check=2016-02-29', [7]],
  ['assets/next_check=<NULL>', [4, 9, 10, 11]],
  ['assets/next_check!<NULL>', [1, 2, 3, 5, 6, 7, 8, 12]],
  ['assets/next_check~2017-10', [1, 2, 12]],
  ['assets/next_check~-02-29', [7]],
  ['assets/next_check~2023-02-29', []],
  // datetimes compared with a date: the date part; the last day of the calendar has no day after it
  ['assets/modified>9999-12-31', []],
  ['assets/modified=9999-12-31', []],
  ['assets/modified<9999-12-31', ALL],
  ['assets/modified-9999-12-31', ALL],
  ['assets/modified+0001-01-01', ALL],
  ['assets/next_check>0001-01-01', [1, 2, 3, 5, 6, 7, 8, 12]],
  // several segments, on the same field or not, all apply
  ['assets/next_check+2017-10-01/next_check-2018-12-31', [1, 2, 3, 12]],
  ['assets/next_check>2017-10-09/next_check<2019-01-02', [2, 3, 5]],
  ['assets/next_check>2016-02-29/next_check<2017-10-31', [1, 12]],
  ['assets/next_check!2017-10-09/next_check!<NULL>', [2, 3, 5, 6, 7, 8]],
  ['assets/next_check=2017-10-09/next_check=2017-10-31', []],
  ['assets/next_check<2018-01-01/status=Active', [1, 7, 12]],
  ['assets/id>1/id<12/id!5/id~1', [10, 11]],
  // what the PHP client sends
  ['assets/next_check%2B=2019-01-01', [5, 6, 8]],
  ['assets/next_check%21=2017-10-09', [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]],
  ['assets/next_check-=2017-10-09', [1, 7, 12]],
  ['assets/next_check=%3CNULL%3E', [4, 9, 10, 11]],
  ['assets/next_check%21=%3CNULL%3E', [1, 2, 3, 5, 6, 7, 8, 12]],
  ['assets/assets.id=5', [5]],
  ['assets/assets.next_check=2017-10-09', [1, 12]],
  ['locations/locations.id=2', [2]],
  ['assetqueue/assetqueue.id=3', [3]],
  // escaped operators and fields
  ['assets/next_check%3E2018-01-01', [5, 6, 8]],
  ['assets/next_check%3E=2019-01-01', [5, 6, 8]],
  ['assets/next%5Fcheck=2016-02-29', [7]],
  // refused: 400 quoting the segment exactly as sent, nothing executed
  ['assets/idd=3', invalid('idd=3')],
  ['assets/files.id=1', invalid('files.id=1')],
  ['assets/location=1', invalid('location=1')],
  ['assets/id=%ZZ', invalid('id=%ZZ')],
  ['assets/description=%FF', invalid('description=%FF')],
  ['assets/description~%C3', invalid('description~%C3')],
  ['assets/data.a%20b=1', invalid('data.a%20b=1')],
  ['assets/id', invalid('id')],
  ['assets/=3', invalid('=3')],
  ['assets/id=1+2', invalid('id=1+2')],
  ['assets/id=1.0', invalid('id=1.0')],
  ['assets/id==3', invalid('id==3')],
  ['assets/id=9007199254740992', invalid('id=9007199254740992')],
  ['assets/id=-9007199254740992', invalid('id=-9007199254740992')],
  ['assets/next_check=2023-02-29', invalid('next_check=2023-02-29')],
  ['assets/next_check=2017-10-09+10:00:00', invalid('next_check=2017-10-09+10:00:00')],
  ['assets/next_check%2B%3D2019-01-01', invalid('next_check%2B%3D2019-01-01')],
  ['assets/next_check><NULL>', invalid('next_check><NULL>')],
  ['assets/next_check>%3CNULL%3E', invalid('next_check>%3CNULL%3E')],
  ['assets/next_check~%3CNULL%3E', invalid('next_check~%3CNULL%3E')],
  ['assets/id>1/idd=2', invalid('idd=2')],
  ['assets/id=5/id=x', invalid('id=x')],
  ['assets/page=0', invalid('page=0')],
  ['assets/page=-1', invalid('page=-1')],
  ['assets/page=abc', invalid('page=abc')],
  ['assets/page>2', invalid('page>2')],
  ['assets/page=1/page=2', invalid('page=2')],
];

filterTable('filters on plain fields', rows, (data) => {
  const segments = (n: number, s: string) => Array.from({ length: n }, () => s).join('/');

  it('32 filter segments are accepted; a 33rd is refused; page does not count', async () => {
    const { a } = data();
    assert.deepEqual(idsOf(await a.get(`/3.0/assets/${segments(32, 'id>1')}`)), range(2, 12));
    assert.deepEqual(idsOf(await a.get(`/3.0/assets/${segments(32, 'id>1')}/page=1`)), range(2, 12));
    assertError(await a.get(`/3.0/assets/${segments(32, 'id>1')}/id<5`), 400, 'invalid_filter', 'Invalid filter definition: id<5');
  });

  it('PUT with any filter segment → 400, nothing created', async () => {
    const { a } = data();
    assertError(await a.put('/3.0/assets/id=1', { asset_no: 'P-1' }), 400, 'invalid_filter', 'Invalid filter definition: id=1');
    assertError(await a.put('/3.0/assets/page=1', { asset_no: 'P-1' }), 400, 'invalid_filter', 'Invalid filter definition: page=1');
    assert.deepEqual(idsOf(await a.get('/3.0/assets/asset_no=P-1')), []);
  });

  it('POST and DELETE with a bad segment → 400, nothing changed', async () => {
    const { a } = data();
    assertError(await a.post('/3.0/assets/id=1/idd=2', { status: 'Changed' }), 400, 'invalid_filter', 'Invalid filter definition: idd=2');
    assertError(await a.delete('/3.0/assets/id=4/next_check>%3CNULL%3E'), 400, 'invalid_filter',
      'Invalid filter definition: next_check>%3CNULL%3E');
    assert.deepEqual(idsOf(await a.get('/3.0/assets/status=Changed')), []);
    assert.deepEqual(idsOf(await a.get('/3.0/assets')), ALL);
  });

  it('page is for GET only: POST and DELETE with page → 400, nothing changed', async () => {
    const { a } = data();
    assertError(await a.post('/3.0/assets/id>0/page=2', { status: 'Paged' }), 400, 'invalid_filter', 'Invalid filter definition: page=2');
    assertError(await a.post('/3.0/assets/page=1/id=3', { status: 'Paged' }), 400, 'invalid_filter', 'Invalid filter definition: page=1');
    assertError(await a.delete('/3.0/assets/id>0/page=2'), 400, 'invalid_filter', 'Invalid filter definition: page=2');
    assert.deepEqual(idsOf(await a.get('/3.0/assets/status=Paged')), []);
    assert.deepEqual(idsOf(await a.get('/3.0/assets')), ALL);
    // GET still pages.
    assert.deepEqual(idsOf(await a.get('/3.0/assets/id>0/page=2')), []);
  });

  it('POST with filters matches exactly what GET lists (PHP encodings included)', async () => {
    const { a } = data();
    const res = await a.post('/3.0/assets/next_check%2B=2019-01-01/description%21=%3CNULL%3E', {});
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.envelope.response, { records_updated: 0, records_found: 3 });
  });

  it('a NUL byte in a value is refused (no engine stores one; it would cut a LIKE pattern short)', async () => {
    for (const segment of ['description=%00', 'description~%00', 'data.cat=%00', 'description~a%00b']) {
      const res = await data().a.get(`/3.0/assets/${segment}`);
      assertError(res, 400, 'invalid_filter', `Invalid filter definition: ${segment}`);
    }
  });

  it('the error quotes the path exactly as received in request.url', async () => {
    const res = await data().a.get('/3.0/assets/id>1/foo=a+b%2Bc');
    assertError(res, 400, 'invalid_filter', 'Invalid filter definition: foo=a+b%2Bc');
    assert.equal(res.envelope.request.url, '/3.0/assets/id>1/foo=a+b%2Bc');
  });
});
