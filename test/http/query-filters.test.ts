// Filters given in the query string (`?filter=<segment>`, repeated, and `?page=N`) over
// HTTPS against both engines: the same grammar and answers as path segments, decoded
// once by the query string's rules; combined with path filters; on GET, POST and DELETE;
// refused on PUT; sharing the limit of filters; and the path form's equal in a property
// test over generated filters. Data: test/support/filter-data.ts (assets 1–11 of A, 12 of
// its child C, 13 of B; departments 1–65 of A).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { assertError, filterTable, idsOf, invalid, range, type Row } from '../support/filter-data.ts';

const ALL = range(1, 12);
const except = (...ids: number[]) => ALL.filter((id) => !ids.includes(id));
const ACTIVE = except(2, 3);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);

const rows: readonly Row[] = [
  ['assets?filter=status=Active', ACTIVE],
  ['assets?filter=status%3DActive', ACTIVE],
  ['assets?filter=status!Active', [2, 3]],
  // the operator `+` must be sent as %2B: a `+` is a space in a query string
  ['assets?filter=next_check%2B2018-01-01', [3, 5, 6, 8]],
  ['assets?filter=next_check+2018-01-01', invalid('next_check 2018-01-01')],
  // two-character aliases, their `=` raw or escaped
  ['assets?filter=next_check>=2018-01-01', [3, 5, 6, 8]],
  ['assets?filter=next_check%3E%3D2018-01-01', [3, 5, 6, 8]],
  ['assets?filter=next_check%2B%3D2018-01-01', [3, 5, 6, 8]],
  ['assets?filter=next_check<=2017-10-09', [1, 7, 12]],
  ['assets?filter=next_check-%3D2017-10-09', [1, 7, 12]],
  ['assets?filter=id!=3', except(3)],
  ['assets?filter=id%21%3D3', except(3)],
  ['assets?filter=id==3', invalid('id==3')],
  // values: `+` and `%20` are spaces, `%2B` a plus, and nothing is decoded twice
  ['assets?filter=description=Calib+Set', [2]],
  ['assets?filter=description=Calib%20Set', [2]],
  ['assets?filter=serial_no=S%2B1', [2]],
  ['assets?filter=serial_no=S+1', []],
  ['assets?filter=description~100%25', [5]],
  ['assets?filter=description~100%2525', []],
  ['assets?filter=description~caf%C3%A9', [8]],
  ['assets?filter=description~k%5Cs', [7]],
  ['assets?filter=id=1%2B2', invalid('id=1+2')],
  // <NULL>
  ['assets?filter=next_check=<NULL>', [4, 9, 10, 11]],
  ['assets?filter=next_check=%3CNULL%3E', [4, 9, 10, 11]],
  ['assets?filter=next_check!=%3CNULL%3E', [1, 2, 3, 5, 6, 7, 8, 12]],
  ['assets?filter=next_check>%3CNULL%3E', invalid('next_check><NULL>')],
  ['assets?filter=description=%253CNULL%253E', []],
  // field forms: relations, JSON paths, the table-qualified name
  ['assets?filter=location.description~lab', [1, 12]],
  ['assets?filter=data.cost=10', [1, 3, 12]],
  ['assets?filter=company.data.region=south', [12]],
  ['assets?filter=assets.id=5', [5]],
  // several filters, and path filters with query filters: all hold
  ['assets?filter=next_check<2018-01-01&filter=status=Active', [1, 7, 12]],
  ['assets/next_check<2018-01-01?filter=status=Active', [1, 7, 12]],
  ['assets/id>1?filter=id<12&filter=id!5&filter=id~1', [10, 11]],
  ['assets/id=3?filter=id=4', []],
  // other parameters are ignored; only `filter` and `page` count
  ['assets?_=1712345678', ALL],
  ['assets?_=1712345678&filter=id=3&sort=id', [3]],
  ['assets?filters=id=3&Filter=id=3&f=id=3', ALL],
  ['assets?filter=id>0&page=1', ALL],
  // refusals: decoded text quoted, or the value as sent when it does not decode
  ['assets?filter=idd=3', invalid('idd=3')],
  ['assets?filter=files.id=1', invalid('files.id=1')],
  ['assets?filter=next_check=2023-02-29', invalid('next_check=2023-02-29')],
  ['assets/id>1?filter=idd=2', invalid('idd=2')],
  ['assets/idd=2?filter=idx=2', invalid('idd=2')],
  ['assets?filter=id=%ZZ', invalid('id=%ZZ')],
  ['assets?filter=description=%FF', invalid('description=%FF')],
  ['assets?filter=description~%C3', invalid('description~%C3')],
  ['assets?filter=', invalid('')],
  ['assets?filter', invalid('')],
  ['assets?filter=id>0&filter=', invalid('')],
  ['assets?page=0', invalid('page=0')],
  ['assets?page=abc', invalid('page=abc')],
  ['assets?page=', invalid('page=')],
  ['assets?page=%ZZ', invalid('page=%ZZ')],
  ['assets?filter=page>2', invalid('page>2')],
  // page given twice, or both ways
  ['assets?page=1&page=2', invalid('page=2')],
  ['assets?page=1&page=1', invalid('page=1')],
  ['assets/page=1?page=2', invalid('page=2')],
  ['assets?filter=page=1&page=2', invalid('page=2')],
  ['assets?page=1&filter=page%3D2', invalid('page=2')],
];

filterTable('filters in the query string', rows, (data) => {
  const repeat = (n: number, s: string) => Array.from({ length: n }, () => s);

  it('page from the query pages like a page segment, with the totals of the whole match', async () => {
    const { a } = data();
    for (const url of ['/3.0/departments?page=2', '/3.0/departments?filter=page%3D2', '/3.0/departments/page=2', '/3.0/departments/id>0?page=2']) {
      const res = await a.get(url);
      assert.deepEqual(idsOf(res), range(31, 60), url);
      assert.deepEqual(res.envelope.pagination, { total_pages: 3, total_records: 65 }, url);
    }
    const last = await a.get('/3.0/departments?filter=data.grp!0&page=2');
    assert.deepEqual(idsOf(last), range(1, 65).filter((id) => id % 3 !== 0).slice(30));
    assert.deepEqual(last.envelope.pagination, { total_pages: 2, total_records: 44 });
    assert.deepEqual(idsOf(await a.get('/3.0/departments?page=4')), []);
  });

  it('request.url echoes the path without the query', async () => {
    const { a } = data();
    const res = await a.get('/3.0/assets/id>1?filter=id<3&_=9');
    assert.deepEqual(idsOf(res), [2]);
    assert.equal(res.envelope.request.url, '/3.0/assets/id>1');
    const refused = await a.get('/3.0/assets?filter=idd=3');
    assert.equal(refused.envelope.request.url, '/3.0/assets');
  });

  it('path and query filters share the limit of 32; page does not count', async () => {
    const { a } = data();
    const path = repeat(16, 'id>1').join('/');
    const query = repeat(16, 'filter=id>1').join('&');
    assert.deepEqual(idsOf(await a.get(`/3.0/assets/${path}?${query}&page=1`)), range(2, 12));
    assert.deepEqual(idsOf(await a.get(`/3.0/assets?${repeat(32, 'filter=id>1').join('&')}`)), range(2, 12));
    assertError(await a.get(`/3.0/assets/${path}?${query}&filter=id%3C5`), 400, 'invalid_filter', 'Invalid filter definition: id<5');
    assertError(await a.get(`/3.0/assets?${repeat(33, 'filter=id>1').join('&')}`), 400, 'invalid_filter', 'Invalid filter definition: id>1');
  });

  it('POST and DELETE take query filters, and still refuse to run with none', async () => {
    const { a } = data();
    const made = await a.put('/3.0/assets?_=1', [{ asset_no: 'Q-1', description: 'query one' }, { asset_no: 'Q-2', description: 'query two' }]);
    assert.equal(made.status, 201, made.text);
    const [one, two] = made.reply<{ ids: number[] }>().ids;
    const updated = await a.post('/3.0/assets?filter=asset_no~Q-&filter=description=query+one', { status: 'Queried' });
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual(updated.envelope.response, { records_updated: 1, records_found: 1 });
    assert.deepEqual(idsOf(await a.get('/3.0/assets?filter=status=Queried')), [one]);
    const both = await a.post(`/3.0/assets/asset_no~Q-?filter=id%3E%3D${one}`, { status: 'Queried' });
    assert.deepEqual(both.envelope.response, { records_updated: 1, records_found: 2 });
    assertError(await a.post('/3.0/assets?_=1&sort=id', { status: 'All' }), 400, 'filter_required',
      'No fields specified for record updating. This would update ALL assets records for your company. Request aborted.');
    assertError(await a.delete('/3.0/assets?filters=id=1'), 400, 'filter_required',
      'No fields specified for record deletion. This would delete ALL assets records for your company. Request aborted.');
    // page is for GET only, and is no filter
    assertError(await a.post('/3.0/assets?page=1', { status: 'All' }), 400, 'invalid_filter', 'Invalid filter definition: page=1');
    assertError(await a.post(`/3.0/assets?filter=id=${one}&page=1`, { status: 'Paged' }), 400, 'invalid_filter', 'Invalid filter definition: page=1');
    assertError(await a.delete(`/3.0/assets/id=${one}?filter=page=1`), 400, 'invalid_filter', 'Invalid filter definition: page=1');
    assertError(await a.delete(`/3.0/assets?filter=id=${one}&filter=%ZZ`), 400, 'invalid_filter', 'Invalid filter definition: %ZZ');
    assert.deepEqual(idsOf(await a.get('/3.0/assets?filter=status~Paged')), []);
    assert.deepEqual(idsOf(await a.get('/3.0/assets?filter=status=All')), []);
    const removed = await a.delete('/3.0/assets?filter=asset_no~Q-');
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.envelope.response, { records_deleted: 2, records_found: 2 });
    assert.deepEqual(idsOf(await a.get(`/3.0/assets?filter=id%2B${Math.min(one!, two!)}`)), []);
  });

  it('PUT refuses a query filter (quoted decoded), and creates nothing', async () => {
    const { a } = data();
    assertError(await a.put('/3.0/assets?filter=id%3D1', { asset_no: 'P-Q' }), 400, 'invalid_filter', 'Invalid filter definition: id=1');
    assertError(await a.put('/3.0/assets?page=1', { asset_no: 'P-Q' }), 400, 'invalid_filter', 'Invalid filter definition: page=1');
    assert.deepEqual(idsOf(await a.get('/3.0/assets?filter=asset_no=P-Q')), []);
  });

  it('endpoints without filters ignore the query', async () => {
    const { a } = data();
    const res = await a.get('/3.0/endpoints?filter=id%3D1&page=2');
    assert.equal(res.status, 200, res.text);
    assert.equal((await a.get('/3.0/randompassword?filter=idd=1')).status, 200);
    const token = '00000000-0000-4000-8000-000000000000';
    assertError(await a.get(`/3.0/upload/${token}?filter=%ZZ&page=0`), 404, 'not_found', `Upload ${token} does not exist`);
    // Checks before the filters still come first.
    assertError(await a.get('/3.0/nosuch?filter=%ZZ'), 404, 'no_endpoint', 'Endpoint nosuch does not exist');
    assertError(await a.get('/2.0/assets?filter=%ZZ'), 404, 'no_version', 'API version 2.0 is not supported');
  });

  it('HEAD answers as GET with the query\'s filters', async () => {
    const { a } = data();
    const get = await a.get('/3.0/assets?filter=id=3');
    const head = await a.request('HEAD', '/3.0/assets?filter=id=3');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    assert.equal((await a.request('HEAD', '/3.0/assets?filter=idd=3')).status, 400);
  });

  it('the ETag is the same for the same records, whichever way the filters came; If-None-Match holds', async () => {
    const { a } = data();
    const path = await a.get('/3.0/assets/next_check%2B=2018-01-01/status=Active');
    const query = await a.get('/3.0/assets?filter=next_check%2B2018-01-01&filter=status=Active&_=1');
    const mixed = await a.get('/3.0/assets/status=Active?filter=next_check>=2018-01-01');
    assert.deepEqual(idsOf(query), idsOf(path));
    assert.ok(path.headers.etag);
    assert.equal(query.headers.etag, path.headers.etag);
    assert.equal(mixed.headers.etag, path.headers.etag);
    const again = await a.get('/3.0/assets?filter=next_check%2B2018-01-01&filter=status=Active', { headers: { 'if-none-match': String(path.headers.etag) } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const other = await a.get('/3.0/assets?filter=next_check%2B2018-01-01', { headers: { 'if-none-match': String(path.headers.etag) } });
    assert.equal(other.status, 200);
  });

  it('If-Match takes the ETag of the GET of the same query filters', async () => {
    const { a } = data();
    const seen = String((await a.get('/3.0/assets?filter=id=10')).headers.etag);
    const ifMatch = { headers: { 'if-match': seen } };
    const first = await a.post('/3.0/assets?filter=id=10', { status: 'Matched' }, ifMatch);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.envelope.response, { records_updated: 1, records_found: 1 });
    assertError(await a.post('/3.0/assets/id=10', { status: 'Again' }, ifMatch), 412, 'precondition_failed', `Record changed since version ${seen}`);
    assertError(await a.delete('/3.0/assets?filter=id=10', ifMatch), 412, 'precondition_failed', `Record changed since version ${seen}`);
    assert.equal((await a.post('/3.0/assets?filter=id=10', { status: 'Active' })).status, 200);
  });

  it('an Idempotency-Key holds the query\'s filters: a retry replays, other filters are another request', async () => {
    const { a } = data();
    const keyed = { headers: { 'idempotency-key': 'query-filters-1' } };
    const first = await a.post('/3.0/assets?filter=id=11', { status: 'Keyed' }, keyed);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.envelope.response, { records_updated: 1, records_found: 1 });
    const replay = await a.post('/3.0/assets?filter=id=11&_=2', { status: 'Keyed' }, keyed);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.text, first.text);
    assertError(await a.post('/3.0/assets?filter=id=10', { status: 'Keyed' }, keyed), 422, 'idempotency_mismatch',
      'Idempotency-Key query-filters-1 was used for another request');
    assertError(await a.post('/3.0/assets/id=11', { status: 'Keyed' }, keyed), 422, 'idempotency_mismatch',
      'Idempotency-Key query-filters-1 was used for another request');
    assert.deepEqual(idsOf(await a.get('/3.0/assets?filter=status=Keyed')), [11]);
    const back = await a.post('/3.0/assets/id=11', { status: 'Active' });
    assert.equal(back.status, 200, back.text);
  });

  it('the query form answers as the path form (property over generated filters)', async () => {
    const { a } = data();
    await fc.assert(fc.asyncProperty(filtersArb, pageArb, fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
      async (filters, page, inQuery) => {
        const texts = [...filters.map((f) => f.text), ...(page === null ? [] : [`page=${page}`])];
        const pathForm = `/3.0/assets/${filters.map(pathSegment).join('/')}${page === null ? '' : `/page=${page}`}`;
        const asPath = await a.get(pathForm);
        // All in the query (two encodings), then split between path and query at random.
        const urls = [
          `/3.0/assets?${texts.map((t) => `filter=${encodeURIComponent(t)}`).join('&')}`,
          `/3.0/assets?${new URLSearchParams(texts.map((t) => ['filter', t])).toString()}`,
          splitForms(filters, page, inQuery),
        ];
        for (const url of urls) {
          const asQuery = await a.get(url);
          const where = `${pathForm} (${asPath.status}) vs ${url} (${asQuery.status}): ${asQuery.text.slice(0, 300)}`;
          assert.equal(asQuery.status, asPath.status, where);
          if (asPath.status === 200) {
            assert.deepEqual(asQuery.envelope.response, asPath.envelope.response, where);
            assert.deepEqual(asQuery.envelope.pagination, asPath.envelope.pagination, where);
            assert.equal(asQuery.headers.etag, asPath.headers.etag, where);
          } else {
            assert.equal(asQuery.errorReply.code, asPath.errorReply.code, where);
          }
        }
      }), { numRuns: RUNS });
  });
});

// ---- Generated filters for the property: [field, operator as written, value], over assets.

interface Generated { readonly field: string; readonly op: string; readonly value: string; readonly text: string }

/** Fields of assets with values of their type (mostly valid filters), and values of every kind (refusals among them). */
const TYPED: Readonly<Record<string, readonly string[]>> = {
  'id': ['1', '3', '12', '-1', '<NULL>'],
  'assets.id': ['5', '11'],
  'period': ['6', '12', '<NULL>'],
  'location_id': ['1', '3', '<NULL>'],
  'status': ['Active', 'active', 'Retired', '<NULL>', ''],
  'description': ['Calib Set', 'scale', 'Café', 'caf', '100%', 'k\\s', 'Under_score 100%', '<NULL>'],
  'serial_no': ['S+1', 'SN 100', 'S', '', '<NULL>'],
  'next_check': ['2017-10-09', '2018-01-01', '2019-01-02', '<NULL>'],
  'modified': ['2017-10-09', '2017-10-09 08:00:00', '9999-12-31'],
  'data.cost': ['10', '9.5', '-1', 'x', '<NULL>'],
  'data.cat': ['alpha', 'alpha beta', 'Beta', 'true', '10'],
  'data.nested.a.b': ['5', '<NULL>'],
  'location.description': ['Main Lab', 'lab', 'store_room 100%', '<NULL>'],
  'company.name': ['Acme', 'Acme Child'],
  'company.data.region': ['north', 'south', '<NULL>'],
};
const FIELDS = [...Object.keys(TYPED), 'idd', 'files.id'];
const OPERATORS = ['=', '>', '<', '!', '~', '+', '-', '!=', '>=', '<=', '+=', '-='];
const ODD_VALUES = ['', 'x', '<NULL>', 'a/b', 'a&b=c', '#1', '?', '=5', '1.0', '9007199254740992', '2023-02-29', '%', '+', '%2B'];

const filterArb: fc.Arbitrary<Generated> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...Object.entries(TYPED)).chain(([field, values]) => fc.tuple(fc.constant(field), fc.constantFrom(...values))) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...FIELDS), fc.constantFrom(...ODD_VALUES)) },
).chain(([field, value]) => fc.constantFrom(...OPERATORS).map((op) => ({ field, op, value, text: `${field}${op}${value}` })));
const filtersArb = fc.array(filterArb, { minLength: 1, maxLength: 3 });
const pageArb = fc.option(fc.constantFrom('1', '2', '0'), { nil: null, freq: 4 });

/**
 * A filter as a path segment: the operator raw, the value percent-encoded as the PHP client does (`%2B` for a plus,
 * `%20` a space), so that it reaches the server as the same text. In the query form any `=` after a one-character
 * operator makes an alias; in a path only a raw one does, so such an `=` is written raw here.
 */
function pathSegment(f: Generated): string {
  const aliased = f.op.length === 1 && '!+>-<'.includes(f.op) && f.value.startsWith('=');
  return `${f.field}${f.op}${aliased ? '=' : ''}${encodeURIComponent(aliased ? f.value.slice(1) : f.value)}`;
}

/** The filters split between path and query (`inQuery[i]`), and the page in the query. */
function splitForms(filters: readonly Generated[], page: string | null, inQuery: readonly boolean[]): string {
  const path = filters.filter((_, i) => !inQuery[i]).map(pathSegment);
  const query = filters.filter((_, i) => inQuery[i]).map((f) => `filter=${encodeURIComponent(f.text)}`);
  if (page !== null) query.push(`page=${page}`);
  return `/3.0/assets${path.map((s) => `/${s}`).join('')}?${query.join('&')}`;
}
