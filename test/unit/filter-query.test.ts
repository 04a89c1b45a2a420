// Filters in the query string, without HTTP or SQL: splitPath picks the `filter` and
// `page` parameters out of a request target; parseQuerySegment decodes a value once by
// the query string's rules and reads it with the path's grammar, the value taken
// literally; parseQuery combines path and query filters.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LIMITS } from '../../src/engine/context.ts';
import { parseQuery } from '../../src/engine/query.ts';
import { ApiError } from '../../src/errors.ts';
import { parseQuerySegment } from '../../src/filter/parse.ts';
import { splitPath } from '../../src/http/path.ts';
import type { Verb } from '../../src/model/types.ts';
import { createRegistry } from '../../src/resources/registry.ts';
import type { Query } from '../../src/engine/types.ts';

const registry = createRegistry();

function query(endpoint: string, segments: readonly string[], q: readonly string[], verb: Verb = 'GET'): Query {
  return parseQuery(registry.lookup(endpoint), verb, { segments, query: q }, undefined, registry.lookup, DEFAULT_LIMITS);
}

function assertInvalid(fn: () => unknown, quoted: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`);
    assert.deepEqual({ status: e.status, code: e.code, message: e.message },
      { status: 400, code: 'invalid_filter', message: `Invalid filter definition: ${quoted}` });
    return true;
  });
}

describe('splitPath: the query parameters that count', () => {
  const rows: readonly [string, readonly string[]][] = [
    ['/3.0/assets', []],
    ['/3.0/assets?', []],
    ['/3.0/assets?filter=id%3D3', ['id%3D3']],
    ['/3.0/assets?filter=id=3&filter=status=Active&page=2', ['id=3', 'status=Active', 'page=2']],
    ['/3.0/assets?page=2&filter=id>1', ['page=2', 'id>1']],
    // other parameters are ignored, a cache-buster among them
    ['/3.0/assets?_=1712345678&filter=id=3&sort=x&Filter=id=4&filters=id=5', ['id=3']],
    // a name is read by the query string's rules too
    ['/3.0/assets?fil%74er=id=3&%70age=1', ['id=3', 'page=1']],
    ['/3.0/assets?fil%ZZter=id=3', []],
    // no `=`: an empty value
    ['/3.0/assets?filter&page', ['', 'page=']],
    ['/3.0/assets?filter=', ['']],
    // the value is kept as sent: the filter parser decodes it
    ['/3.0/assets?filter=description=a+b%2Bc%20d', ['description=a+b%2Bc%20d']],
  ];
  for (const [url, expected] of rows) it(url, () => assert.deepEqual(splitPath(url).query, expected));

  it('the parameters that count, as sent, are part of the request; others are not', () => {
    assert.equal(splitPath('/3.0/assets?_=1&filter=id%3D3&x=y&page=2').counted, 'filter=id%3D3&page=2');
    assert.equal(splitPath('/3.0/assets?_=1').counted, '');
    assert.equal(splitPath('/3.0/assets').counted, '');
  });

  it('the path is unchanged by the query', () => {
    const p = splitPath('/3.0/assets/id>1//?filter=id<5&page=1');
    assert.deepEqual({ raw: p.raw, version: p.version, endpoint: p.endpoint, segments: p.segments },
      { raw: '/3.0/assets/id>1//', version: '3.0', endpoint: 'assets', segments: ['id>1'] });
  });
});

describe('parseQuerySegment: decoded once, then the value taken literally', () => {
  // [value as sent in the query, the decoded text errors quote, field, operator, value (null = <NULL>)]
  const rows: readonly [string, string, string, string, string | null][] = [
    ['id%3D5', 'id=5', 'id', '=', '5'],
    ['id=5', 'id=5', 'id', '=', '5'],
    ['next_check%2B2026-01-01', 'next_check+2026-01-01', 'next_check', '+', '2026-01-01'],
    ['next_check+2026-01-01', 'next_check 2026-01-01', 'next_check', '', ''],
    // `+` and `%20` are spaces, `%2B` a plus, and nothing is decoded twice
    ['description=a+b', 'description=a b', 'description', '=', 'a b'],
    ['description=a%20b', 'description=a b', 'description', '=', 'a b'],
    ['serial_no=S%2B1', 'serial_no=S+1', 'serial_no', '=', 'S+1'],
    ['description~100%2525', 'description~100%25', 'description', '~', '100%25'],
    ['description~%25', 'description~%', 'description', '~', '%'],
    ['description=caf%C3%A9', 'description=café', 'description', '=', 'café'],
    // two-character aliases, whether their `=` came escaped or not
    ['id%3E%3D5', 'id>=5', 'id', '+', '5'],
    ['id>=5', 'id>=5', 'id', '+', '5'],
    ['id%21%3D5', 'id!=5', 'id', '!', '5'],
    ['id%2B%3D5', 'id+=5', 'id', '+', '5'],
    ['id-%3D5', 'id-=5', 'id', '-', '5'],
    ['id%3C=5', 'id<=5', 'id', '-', '5'],
    ['id==5', 'id==5', 'id', '=', '=5'],
    // <NULL> is the decoded text `<NULL>`
    ['next_check=%3CNULL%3E', 'next_check=<NULL>', 'next_check', '=', null],
    ['next_check!=<NULL>', 'next_check!=<NULL>', 'next_check', '!', null],
    ['description=%253CNULL%253E', 'description=%3CNULL%3E', 'description', '=', '%3CNULL%3E'],
    // field forms
    ['location.description~lab', 'location.description~lab', 'location.description', '~', 'lab'],
    ['data.a.b%3D1', 'data.a.b=1', 'data.a.b', '=', '1'],
    ['page=2', 'page=2', 'page', '=', '2'],
  ];
  for (const [sent, text, field, op, value] of rows) {
    if (op === '') {
      it(`${sent} → refused`, () => assertInvalid(() => parseQuerySegment(sent), text));
      continue;
    }
    it(sent, () => assert.deepEqual(parseQuerySegment(sent), { raw: text, field, op, value }));
  }

  // Undecodable values and empty ones are refused quoting the value as sent.
  for (const sent of ['', 'id=%ZZ', 'id=%5', 'id=%', 'description=%FF', 'description=%C3', 'description=%ED%A0%80']) {
    it(`${JSON.stringify(sent)} does not decode`, () => assertInvalid(() => parseQuerySegment(sent), sent));
  }
  // Decoded, but not a segment: quoted decoded.
  for (const [sent, text] of [['id', 'id'], ['%3D3', '=3'], ['data.a%20b=1', 'data.a b=1'], ['description=a%00b', 'description=a\u0000b']]) {
    it(`${sent} is no segment`, () => assertInvalid(() => parseQuerySegment(sent!), text!));
  }
});

describe('parseQuery: path and query filters together', () => {
  it('all hold: path conditions first, then the query\'s', () => {
    const q = query('assets', ['id>1'], ['status=Active', 'id%3C5']);
    assert.deepEqual(q.conditions.map((c) => c.segment.raw), ['id>1', 'status=Active', 'id<5']);
  });

  it('page from the query, as `page` or as a filter', () => {
    assert.equal(query('assets', [], ['page=3']).page, 3);
    assert.equal(query('assets', [], ['page%3D4']).page, 4);
    assert.equal(query('assets', ['id>1'], ['page=02']).page, 2);
  });

  it('page twice, or both ways → the second is refused', () => {
    assertInvalid(() => query('assets', ['page=1'], ['page=2']), 'page=2');
    assertInvalid(() => query('assets', [], ['page=1', 'page=1']), 'page=1');
    assertInvalid(() => query('assets', [], ['page=1', 'page%3D2']), 'page=2');
  });

  it('a bad page in the query is quoted decoded', () => {
    for (const [sent, text] of [['page=0', 'page=0'], ['page=-1', 'page=-1'], ['page=x', 'page=x'], ['page=', 'page='],
      ['page=1+', 'page=1 '], ['page%3E1', 'page>1'], ['page=%ZZ', 'page=%ZZ']]) {
      assertInvalid(() => query('assets', [], [sent!]), text!);
    }
  });

  it('page on POST or DELETE is refused', () => {
    assertInvalid(() => query('assets', [], ['id=1', 'page=1'], 'POST'), 'page=1');
    assertInvalid(() => query('assets', ['id=1'], ['page=1'], 'DELETE'), 'page=1');
  });

  it('PUT refuses a query filter, quoting it decoded', () => {
    assertInvalid(() => query('assets', [], ['id%3D1'], 'PUT'), 'id=1');
    assertInvalid(() => query('assets', [], ['page=1'], 'PUT'), 'page=1');
    assertInvalid(() => query('assets', ['id=2'], ['id%3D1'], 'PUT'), 'id=2');
    assertInvalid(() => query('assets', [], ['%ZZ'], 'PUT'), '%ZZ');
  });

  it('path and query segments share the limit of filters; page does not count', () => {
    const max = DEFAULT_LIMITS.maxFilters;
    const half = Array.from({ length: max / 2 }, () => 'id>1');
    assert.equal(query('assets', half, [...half, 'page=1']).conditions.length, max);
    assertInvalid(() => query('assets', half, [...half, 'id%3C5']), 'id<5');
    assertInvalid(() => query('assets', [...half, 'id<9'], half), 'id>1');
  });
});
