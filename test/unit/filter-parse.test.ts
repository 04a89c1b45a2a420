// Filter segments and queries, without HTTP or SQL:
// parseSegment splits one raw segment; parseQuery resolves and types a path's segments.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LIMITS } from '../../src/engine/context.ts';
import { parseQuery } from '../../src/engine/query.ts';
import { ApiError } from '../../src/errors.ts';
import { parseSegment } from '../../src/filter/parse.ts';
import type { Verb } from '../../src/model/types.ts';
import { createRegistry } from '../../src/resources/registry.ts';
import type { Query } from '../../src/engine/types.ts';

const registry = createRegistry();

function query(endpoint: string, segments: readonly string[], verb: Verb = 'GET'): Query {
  return parseQuery(registry.lookup(endpoint), verb, { segments, query: [] }, undefined, registry.lookup, DEFAULT_LIMITS);
}

/** `fn` must throw exactly 400 invalid_filter `Invalid filter definition: <raw>`. */
function assertInvalid(fn: () => unknown, raw: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`);
    assert.deepEqual({ status: e.status, code: e.code, message: e.message },
      { status: 400, code: 'invalid_filter', message: `Invalid filter definition: ${raw}` });
    return true;
  });
}

describe('parseSegment: operators, aliases and decoding (steps 1–4)', () => {
  // [raw segment, field, operator, value (null = <NULL>)]
  const rows: readonly [string, string, string, string | null][] = [
    ['id=5', 'id', '=', '5'],
    ['id>5', 'id', '>', '5'],
    ['id<5', 'id', '<', '5'],
    ['id!5', 'id', '!', '5'],
    ['id~5', 'id', '~', '5'],
    ['id+5', 'id', '+', '5'],
    ['id-5', 'id', '-', '5'],
    // two-character aliases
    ['id!=5', 'id', '!', '5'],
    ['id+=5', 'id', '+', '5'],
    ['id>=5', 'id', '+', '5'],
    ['id-=5', 'id', '-', '5'],
    ['id<=5', 'id', '-', '5'],
    // the `=` of an alias must be raw; `%3D` belongs to the value
    ['id!%3D5', 'id', '!', '=5'],
    ['id>%3D5', 'id', '>', '=5'],
    ['id<%3d5', 'id', '<', '=5'],
    ['id%2B%3D5', 'id', '+', '=5'],
    // `=` and `~` have no alias: a second `=` is part of the value
    ['id==5', 'id', '=', '=5'],
    ['name~=x', 'name', '~', '=x'],
    // percent-escaped operators are operators
    ['id%3D5', 'id', '=', '5'],
    ['id%3E5', 'id', '>', '5'],
    ['id%3c5', 'id', '<', '5'],
    ['id%215', 'id', '!', '5'],
    ['id%7E5', 'id', '~', '5'],
    ['id%2B5', 'id', '+', '5'],
    ['id%2D5', 'id', '-', '5'],
    // what the PHP client sends for "greater or equal", "not equal", "less or equal"
    ['next_check%2B=2019-01-01', 'next_check', '+', '2019-01-01'],
    ['next_check%21=2019-01-01', 'next_check', '!', '2019-01-01'],
    ['next_check%3E=2019-01-01', 'next_check', '+', '2019-01-01'],
    ['next_check%3C=2019-01-01', 'next_check', '-', '2019-01-01'],
    // raw `+` in the value is a space, `%2B` a literal plus, `%20` a space
    ['name=a+b', 'name', '=', 'a b'],
    ['name=a%2Bb', 'name', '=', 'a+b'],
    ['name=a%20b', 'name', '=', 'a b'],
    ['name=++', 'name', '=', '  '],
    ['creationdate=2017-10-09+08:00:00', 'creationdate', '=', '2017-10-09 08:00:00'],
    // the raw `+` operator is the operator, not a space
    ['next_check+2019-01-01', 'next_check', '+', '2019-01-01'],
    // <NULL>, raw or escaped; anything else NULL-like is plain text
    ['next_check=<NULL>', 'next_check', '=', null],
    ['next_check=%3CNULL%3E', 'next_check', '=', null],
    ['next_check=%3cNULL%3e', 'next_check', '=', null],
    ['next_check!<NULL>', 'next_check', '!', null],
    ['next_check!=%3CNULL%3E', 'next_check', '!', null],
    ['name=<null>', 'name', '=', '<null>'],
    ['name=<NULL>x', 'name', '=', '<NULL>x'],
    // values: empty, UTF-8, every other character
    ['name=', 'name', '=', ''],
    ['name=%C3%84rzte', 'name', '=', 'Ärzte'],
    ['name=50%25_off\\', 'name', '=', '50%_off\\'],
    ['name=a=b<c>d!e~f-g', 'name', '=', 'a=b<c>d!e~f-g'],
    // field forms and escapes inside the field
    ['assets.id=3', 'assets.id', '=', '3'],
    ['location.description~lab', 'location.description', '~', 'lab'],
    ['company.data.region=north', 'company.data.region', '=', 'north'],
    ['data.$key=1', 'data.$key', '=', '1'],
    ['next%5Fcheck=2019-01-01', 'next_check', '=', '2019-01-01'],
    ['data%2Ea=1', 'data.a', '=', '1'],
    // the field is the longest run of field characters: a `-` ends it (and is `<=`)
    ['data.a-b=1', 'data.a', '-', 'b=1'],
  ];
  for (const [raw, field, op, value] of rows) {
    it(raw, () => assert.deepEqual(parseSegment(raw), { raw, field, op, value }));
  }
});

describe('parseSegment: malformed segments (step 6)', () => {
  const rows: readonly string[] = [
    'id', // no operator
    'id5', // no operator
    '=5', // empty field
    '%3D5', // empty field (escaped operator)
    '~abc',
    'id=%ZZ', // bad percent-escapes
    'id=%5',
    'id=%',
    '%ZZid=1',
    'id=%FF', // invalid UTF-8
    'description=a%00b', // a NUL character
    'name=%C3',
    'name=%C3%28',
    'name=%ED%A0%80', // a UTF-16 surrogate, not UTF-8
    'id%205', // the character after the field is not an operator
    'data.a%20b=1', // JSON key with a space
    'data.%C3%A4=1', // JSON key with a non-ASCII letter
    'data.a/b=1',
    'id*5',
    'id^5',
    'id?5',
  ];
  for (const raw of rows) it(raw, () => assertInvalid(() => parseSegment(raw), raw));
});

interface Expect { field: string; relation: string | null; keys: readonly string[]; value: unknown }

/** Valid segments and the condition each becomes: [endpoint, raw, what it resolves and types to]. */
const VALID: readonly [string, string, Expect][] = [
  // field forms
  ['assets', 'id=5', { field: 'id', relation: null, keys: [], value: { kind: 'scalar', value: 5 } }],
  ['assets', 'assets.id=5', { field: 'id', relation: null, keys: [], value: { kind: 'scalar', value: 5 } }],
  ['users', 'users.first_name=Ann', { field: 'first_name', relation: null, keys: [], value: { kind: 'scalar', value: 'Ann' } }],
  ['assets', 'location.description=Main+Lab', { field: 'description', relation: 'location', keys: [], value: { kind: 'scalar', value: 'Main Lab' } }],
  ['assets', 'company.name=Acme', { field: 'name', relation: 'company', keys: [], value: { kind: 'scalar', value: 'Acme' } }],
  ['companies', 'parentcompany.name=Acme', { field: 'name', relation: 'parentcompany', keys: [], value: { kind: 'scalar', value: 'Acme' } }],
  ['files', 'asset.id=1', { field: 'id', relation: 'asset', keys: [], value: { kind: 'scalar', value: 1 } }],
  ['assets', 'company.subdomain=x', { field: 'subdomain', relation: 'company', keys: [], value: { kind: 'scalar', value: 'x' } }],
  ['assets', 'data.a.b=x', { field: 'data', relation: null, keys: ['a', 'b'], value: { kind: 'json', text: 'x', number: null } }],
  ['assets', 'data.a.b=-1.5e3', { field: 'data', relation: null, keys: ['a', 'b'], value: { kind: 'json', text: '-1.5e3', number: '-1.5e3' } }],
  ['assets', 'data.$x_1.Y=1', { field: 'data', relation: null, keys: ['$x_1', 'Y'], value: { kind: 'json', text: '1', number: '1' } }],
  ['assets', 'assets.data.a=1', { field: 'data', relation: null, keys: ['a'], value: { kind: 'json', text: '1', number: '1' } }],
  ['assets', 'company.data.region=north', { field: 'data', relation: 'company', keys: ['region'], value: { kind: 'json', text: 'north', number: null } }],
  ['companies', 'styles.color=red', { field: 'styles', relation: null, keys: ['color'], value: { kind: 'json', text: 'red', number: null } }],
  ['auditlog', 'newdata.status=x', { field: 'newdata', relation: null, keys: ['status'], value: { kind: 'json', text: 'x', number: null } }],
  ['auditlog', 'olddata.status!x', { field: 'olddata', relation: null, keys: ['status'], value: { kind: 'json', text: 'x', number: null } }],
  ['assets', 'data=<NULL>', { field: 'data', relation: null, keys: [], value: { kind: 'null' } }],
  // integers up to ±(2^53−1)
  ['assets', 'id=9007199254740991', { field: 'id', relation: null, keys: [], value: { kind: 'scalar', value: 9007199254740991 } }],
  ['assets', 'id=-9007199254740991', { field: 'id', relation: null, keys: [], value: { kind: 'scalar', value: -9007199254740991 } }],
  ['assetreminders', 'sent=1', { field: 'sent', relation: null, keys: [], value: { kind: 'scalar', value: 1 } }],
  // dates: real calendar dates
  ['assets', 'next_check=2024-02-29', { field: 'next_check', relation: null, keys: [], value: { kind: 'scalar', value: '2024-02-29' } }],
  ['assets', 'next_check%2B=2019-01-01', { field: 'next_check', relation: null, keys: [], value: { kind: 'scalar', value: '2019-01-01' } }],
  // datetimes: a date (compares the date part) or a datetime with the space written `+`
  ['assetqueue', 'requested_date=2017-10-09', { field: 'requested_date', relation: null, keys: [], value: { kind: 'day', day: '2017-10-09', next: '2017-10-10' } }],
  ['locations', 'creationdate>2017-12-31', { field: 'creationdate', relation: null, keys: [], value: { kind: 'day', day: '2017-12-31', next: '2018-01-01' } }],
  ['locations', 'creationdate=2017-10-09+08:00:00', { field: 'creationdate', relation: null, keys: [], value: { kind: 'scalar', value: '2017-10-09 08:00:00' } }],
  ['locations', 'creationdate=2017-10-09%2023:59:59', { field: 'creationdate', relation: null, keys: [], value: { kind: 'scalar', value: '2017-10-09 23:59:59' } }],
  // `~` compares the text form and skips the type check
  ['assets', 'id~12', { field: 'id', relation: null, keys: [], value: { kind: 'contains', needle: '12' } }],
  ['assets', 'id~abc', { field: 'id', relation: null, keys: [], value: { kind: 'contains', needle: 'abc' } }],
  ['assets', 'next_check~2017-10', { field: 'next_check', relation: null, keys: [], value: { kind: 'contains', needle: '2017-10' } }],
  ['assets', 'next_check~2023-02-29', { field: 'next_check', relation: null, keys: [], value: { kind: 'contains', needle: '2023-02-29' } }],
  ['assets', 'description~50%25_a\\b', { field: 'description', relation: null, keys: [], value: { kind: 'contains', needle: '50%_a\\b' } }],
  // <NULL> with = and ! (and the `!=` alias) on any field
  ['assets', 'next_check=<NULL>', { field: 'next_check', relation: null, keys: [], value: { kind: 'null' } }],
  ['assets', 'period!=%3CNULL%3E', { field: 'period', relation: null, keys: [], value: { kind: 'null' } }],
  ['assets', 'location.description=%3CNULL%3E', { field: 'description', relation: 'location', keys: [], value: { kind: 'null' } }],
];

describe('parseQuery: field forms and typing', () => {
  for (const [endpoint, raw, e] of VALID) {
    it(`${endpoint}/${raw}`, () => {
      const q = query(endpoint, [raw]);
      assert.equal(q.conditions.length, 1);
      const c = q.conditions[0]!;
      assert.deepEqual({ field: c.ref.field.name, relation: c.ref.relation?.name ?? null, keys: c.ref.keys, value: c.value }, e);
      assert.equal(c.segment.raw, raw);
    });
  }
});

/** Segments refused with `Invalid filter definition: <segment>`: [endpoint, raw]. */
const INVALID: readonly [string, string][] = [
  // unknown fields and forms
  ['assets', 'idd=3'],
  ['assets', 'Id=3'],
  ['assets', 'files.id=1'], // one-to-many relation
  ['assets', 'files=1'],
  ['assets', 'location=1'], // a relation is not a field
  ['assets', 'location.nosuch=1'],
  ['assets', 'users.id=1'], // another endpoint's name
  ['assets', 'assets.nosuch=1'],
  ['assets', 'company.parentcompany.name=x'], // embedded records have no embeds
  ['assets', 'status.a=1'], // not a JSON field
  ['assets', 'id.a=1'],
  ['assets', 'data..a=1'],
  ['assets', 'data.a.=1'],
  ['assets', '.id=1'],
  ['assets', 'id.=1'],
  // integers
  ['assets', 'id=abc'],
  ['assets', 'id=1.0'],
  ['assets', 'id=1e3'],
  ['assets', 'id='],
  ['assets', 'id=+1'], // "+" is a space
  ['assets', 'id=%2B1'],
  ['assets', 'id=0x10'],
  ['assets', 'id=9007199254740992'],
  ['assets', 'id=-9007199254740992'],
  ['assets', 'id=99999999999999999999'],
  ['assets', 'id==3'],
  ['assets', 'id!%3D3'],
  ['assetreminders', 'sent=yes'],
  // dates
  ['assets', 'next_check=2023-02-29'],
  ['assets', 'next_check=2019-13-01'],
  ['assets', 'next_check=2019-04-31'],
  ['assets', 'next_check=2019-1-01'],
  ['assets', 'next_check=20190101'],
  ['assets', 'next_check=2019-01-01+10:00:00'], // a datetime is not a date
  ['assets', 'next_check=today'],
  ['assets', 'next_check%2B%3D2019-01-01'], // escaped `=` is part of the value
  // datetimes
  ['locations', 'creationdate=2017-10-09T08:00:00'],
  ['locations', 'creationdate=2017-10-09%2B08:00:00'], // a literal plus
  ['locations', 'creationdate=2017-10-09+24:00:00'],
  ['locations', 'creationdate=2017-10-09+08:60:00'],
  ['locations', 'creationdate=2017-10-09+08:00'],
  ['assetqueue', 'requested_date>2017-02-29'],
  // <NULL> only with = and !
  ['assets', 'next_check><NULL>'],
  ['assets', 'next_check<<NULL>'],
  ['assets', 'next_check~<NULL>'],
  ['assets', 'next_check+<NULL>'],
  ['assets', 'next_check-<NULL>'],
  ['assets', 'next_check>=%3CNULL%3E'],
  ['assets', 'next_check<=%3CNULL%3E'],
  ['assets', 'next_check%2B=%3CNULL%3E'],
  ['assets', 'data.a~%3CNULL%3E'],
  // page: GET only (for these), `=` with a positive integer, once
  ['assets', 'page=0'],
  ['assets', 'page=-1'],
  ['assets', 'page=abc'],
  ['assets', 'page=1.5'],
  ['assets', 'page='],
  ['assets', 'page=+1'],
  ['assets', 'page=%3CNULL%3E'],
  ['assets', 'page=9007199254740992'],
  ['assets', 'page>2'],
  ['assets', 'page<2'],
  ['assets', 'page!=2'],
  ['assets', 'page~2'],
  ['assets', 'page+2'],
];

describe('parseQuery: invalid segments', () => {
  for (const [endpoint, raw] of INVALID) it(`${endpoint}/${raw}`, () => assertInvalid(() => query(endpoint, [raw]), raw));

  it('the first bad segment is quoted, exactly as sent', () => {
    assertInvalid(() => query('assets', ['id>1', 'next_check=2023-02-29', 'idd=1']), 'next_check=2023-02-29');
    assertInvalid(() => query('assets', ['description=a+b%2Bc', 'foo=a+b%2Bc']), 'foo=a+b%2Bc');
  });
});

describe('parseQuery: page', () => {
  it('page=N sets the page and is not a condition', () => {
    const q = query('assets', ['page=3', 'id>1']);
    assert.equal(q.page, 3);
    assert.equal(q.conditions.length, 1);
    assert.equal(query('assets', ['page=9007199254740991']).page, 9007199254740991);
    // Leading zeros read as in integer filters.
    assert.equal(query('assets', ['page=02']).page, 2);
    assertInvalid(() => query('assets', ['page=00']), 'page=00');
    assert.equal(query('assets', ['page%3D2']).page, 2);
  });

  it('without page the page is 1', () => {
    assert.deepEqual(query('assets', []), { conditions: [], order: [], page: 1 });
  });

  it('page may be given only once, even with the same value', () => {
    assertInvalid(() => query('assets', ['page=1', 'page=2']), 'page=2');
    assertInvalid(() => query('assets', ['page=2', 'id>0', 'page=2']), 'page=2');
  });

  it('page is for GET only: POST and DELETE refuse it', () => {
    for (const verb of ['POST', 'DELETE'] as const) assertInvalid(() => query('assets', ['id>1', 'page=2'], verb), 'page=2');
  });
});

describe('parseQuery: several segments, limits and verbs', () => {
  it('several segments on the same field all apply', () => {
    const q = query('assets', ['next_check+2017-01-01', 'next_check-2017-12-31', 'next_check!<NULL>']);
    assert.deepEqual(q.conditions.map((c) => [c.ref.field.name, c.segment.op]), [['next_check', '+'], ['next_check', '-'], ['next_check', '!']]);
  });

  it('up to 32 filter segments are accepted', () => {
    assert.equal(query('assets', Array.from({ length: 32 }, () => 'id>0')).conditions.length, 32);
  });

  it('more than 32 filter segments → invalid_filter quoting the first one over the limit', () => {
    assertInvalid(() => query('assets', [...Array.from({ length: 32 }, () => 'id>0'), 'id<100']), 'id<100');
    assertInvalid(() => query('assets', Array.from({ length: 40 }, (_, i) => `id>${i}`)), 'id>32');
  });

  it('page does not count as a filter: 32 filters and a page are accepted', () => {
    const q = query('assets', [...Array.from({ length: 32 }, () => 'id>0'), 'page=2']);
    assert.equal(q.conditions.length, 32);
    assert.equal(q.page, 2);
  });

  it('PUT takes no filter segment at all, not even a valid one or page', () => {
    assertInvalid(() => query('assets', ['id=1'], 'PUT'), 'id=1');
    assertInvalid(() => query('assets', ['page=1'], 'PUT'), 'page=1');
    assertInvalid(() => query('assets', ['assets.id=1', 'idd=2'], 'PUT'), 'assets.id=1');
    assert.deepEqual(query('assets', [], 'PUT').conditions, []);
  });

  it('POST and DELETE take the same filters as GET', () => {
    for (const verb of ['POST', 'DELETE'] as const) {
      assert.equal(query('assets', ['id=1', 'data.a=x'], verb).conditions.length, 2);
      assertInvalid(() => query('assets', ['idd=1'], verb), 'idd=1');
    }
  });
});
