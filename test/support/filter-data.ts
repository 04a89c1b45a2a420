// A small fixed data set for the filter, ordering and paging tests,
// seeded through the API itself so that both engines hold exactly the same rows.
// Every id below is the one a fresh database hands out; `seedFilterData` checks so.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addClient } from '../../src/admin/accounts.ts';
import { createSelfSigned } from '../../src/tls/x509.ts';
import type { TestClient, TestResponse } from './client.ts';
import { DB_KINDS, type DbKind, type Service, startService } from './harness.ts';
import type { Inserted } from './api.ts';

export interface FilterData {
  readonly svc: Service;
  /** Certificate of company A (1): sees A and its child C (3). */
  readonly a: TestClient;
  /** Certificate of company B (2), a separate tree: none of its rows may ever show up for A. */
  readonly b: TestClient;
  /** Certificate of company C (3), child of A. */
  readonly c: TestClient;
}

export const COMPANY = { A: 1, B: 2, C: 3 } as const;

/** Locations, with the creation time each gets (the test clock is set before each PUT). */
export const LOCATIONS: readonly { id: number; by: 'a' | 'b' | 'c'; description: string; at: string }[] = [
  { id: 1, by: 'a', description: 'Main Lab', at: '2017-10-09T08:00:00Z' },
  { id: 2, by: 'a', description: 'store_room 100%', at: '2017-10-09T23:59:59Z' },
  { id: 3, by: 'a', description: 'Back\\Office', at: '2017-10-10T00:00:00Z' },
  { id: 4, by: 'a', description: 'ÄRZTE zimmer', at: '2017-10-08T12:00:00Z' },
  { id: 5, by: 'a', description: 'storeXroom 1000 percent', at: '2017-11-01T00:00:00Z' },
  { id: 6, by: 'b', description: 'Main Lab', at: '2017-10-09T10:00:00Z' },
  { id: 7, by: 'c', description: 'Child Lab', at: '2017-10-09T09:00:00Z' },
];

/**
 * Assets 1–11 of company A, 12 of its child C, 13 of company B. The `data` column
 * mixes numbers, strings, booleans, null, nested objects, arrays and missing keys.
 * Written as JSON text so that `1e2` reaches the server as written.
 */
export const ASSETS_A = `[
  {"asset_no":"A-001","description":"Scale 10kg","serial_no":"SN 100","status":"Active","next_check":"2017-10-09","period":12,"location_id":1,
   "data":{"cost":10,"cat":"alpha","flag":true,"nested":{"a":{"b":5}},"tags":["x","y"],"$hidden":"h1","mix":5}},
  {"asset_no":"A-002","description":"Calib Set","serial_no":"S+1","status":"active","next_check":"2017-10-31","location_id":2,
   "data":{"cost":9.5,"cat":"Beta","flag":false,"nested":{"a":{"b":"5"}},"big":"100","mix":"5"}},
  {"asset_no":"A-003","description":"Pump","status":"Retired","next_check":"2018-01-01","period":6,"location_id":3,
   "data":{"cost":"10","cat":"10","flag":"true","mix":true}},
  {"asset_no":"A-004","description":"Valve","data":null},
  {"asset_no":"A-005","description":"Under_score 100%","next_check":"2019-01-01","location_id":4,"data":{}},
  {"asset_no":"A-006","description":"UnderXscore 1000 percent","next_check":"2019-01-02","data":{"cost":null,"cat":null,"flag":null,"mix":null}},
  {"asset_no":"A-007","description":"back\\\\slash","next_check":"2016-02-29","location_id":5,
   "data":{"cost":100,"cat":"abc","nested":[1,2],"big":100,"mix":[0]}},
  {"asset_no":"A-008","description":"Café","next_check":"2020-06-15","data":{"cost":-1,"cat":"Zeta","tags":{"x":1},"mix":{"a":0}}},
  {"asset_no":"A-009","description":"Nine","data":{"cost":[1],"cat":true,"mix":false}},
  {"asset_no":"A-010","description":"Ten","data":{"cost":{"x":1},"cat":false,"mix":-3.5}},
  {"asset_no":"A-011","description":"Eleven","data":{"cat":"alpha beta","big":1e2,"mix":""}}
]`;

const ASSET_C = { company_id: COMPANY.C, asset_no: 'C-001', description: 'Child scale', next_check: '2017-10-09', location_id: 7,
  data: { cost: 10, cat: 'alpha', mix: 'Z' } };
const ASSET_B = { asset_no: 'B-001', description: 'Scale 10kg', serial_no: 'SN 100', status: 'Active', next_check: '2017-10-09', period: 12,
  location_id: 6, data: { cost: 10, cat: 'alpha', mix: 5, big: 100 } };

/** Asset queue entries with their request times; 5 belongs to B. */
export const QUEUE: readonly { by: 'a' | 'b'; at: string }[] = [
  { by: 'a', at: '2017-10-09T00:00:00Z' }, { by: 'a', at: '2017-10-09T23:59:59Z' }, { by: 'a', at: '2017-10-10T00:00:00Z' },
  { by: 'a', at: '2017-10-08T23:59:59Z' }, { by: 'b', at: '2017-10-09T12:00:00Z' },
];

/** Departments 1–65 of A (`data.grp` = id % 3), 66–68 of B: enough for three pages of 30. */
export const DEPARTMENTS_A = 65;

/**
 * A client of the company whose certificate is valid from 2017 on: the service
 * checks validity against its (test) clock, which the seed moves back to 2017.
 */
async function clientOf(svc: Service, companyId: number): Promise<TestClient> {
  const cert = createSelfSigned({ cn: `filters-${companyId}`, notBefore: new Date('2017-01-01T00:00:00Z'), days: 365 * 20 });
  await addClient(svc.database, { companyId, certPem: cert.certPem });
  return svc.client(cert);
}

function created(res: TestResponse, ids: readonly number[]): void {
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.reply<Inserted>().ids, ids, 'the seed expects the ids of a fresh database');
}

/** Companies A, B, C with certificates, locations, assets, queue entries and departments. */
export async function seedFilterData(svc: Service): Promise<FilterData> {
  assert.equal(await svc.company('Acme'), COMPANY.A);
  assert.equal(await svc.company('Beta Corp'), COMPANY.B);
  assert.equal(await svc.company('Acme Child', COMPANY.A), COMPANY.C);
  const a = await clientOf(svc, COMPANY.A);
  const b = await clientOf(svc, COMPANY.B);
  const c = await clientOf(svc, COMPANY.C);
  const by = { a, b, c };
  for (const [id, data] of [[COMPANY.A, { region: 'north', tier: 2 }], [COMPANY.C, { region: 'south' }]] as const) {
    const r = await a.post(`/3.0/companies/id=${id}`, { data });
    assert.equal(r.status, 200, r.text);
  }
  for (const l of LOCATIONS) {
    svc.clock.set(new Date(l.at));
    created(await by[l.by].put('/3.0/locations', { description: l.description }), [l.id]);
  }
  created(await a.put('/3.0/assets', ASSETS_A), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  created(await a.put('/3.0/assets', ASSET_C), [12]);
  created(await b.put('/3.0/assets', ASSET_B), [13]);
  for (const [i, q] of QUEUE.entries()) {
    svc.clock.set(new Date(q.at));
    created(await by[q.by].put('/3.0/assetqueue', { description: `Queued ${i + 1}` }), [i + 1]);
  }
  const departments = Array.from({ length: DEPARTMENTS_A }, (_, i) =>
    ({ description: `Dept ${String(i + 1).padStart(2, '0')}`, data: { grp: (i + 1) % 3 } }));
  created(await a.put('/3.0/departments', departments), departments.map((_, i) => i + 1));
  created(await b.put('/3.0/departments', [{ description: 'B 1' }, { description: 'B 2' }, { description: 'B 3' }]), [66, 67, 68]);
  svc.clock.set(new Date());
  return { svc, a, b, c };
}

export async function startWithFilterData(kind: DbKind): Promise<FilterData> {
  const svc = await startService(kind);
  try {
    return await seedFilterData(svc);
  } catch (e) {
    await stopService(svc);
    throw e;
  }
}

/**
 * The harness starts the listener with `https.listen` directly, which Fastify's
 * `close()` does not close; close it here so that the test process can exit.
 */
export async function stopService(svc: Service): Promise<void> {
  svc.app.https.closeAllConnections();
  await new Promise<void>((resolve) => svc.app.https.close(() => resolve()));
  await svc.close();
}

/** The ids of a GET list reply, after checking it is a 200. */
export function idsOf(res: TestResponse): number[] {
  assert.equal(res.status, 200, `expected 200, got ${res.status}: ${res.text}`);
  return res.reply<{ id: number }[]>().map((r) => r.id);
}

/** Checks an exact error reply. */
export function assertError(res: TestResponse, status: number, code: string, message: string): void {
  assert.equal(res.status, status, `expected ${status} "${message}", got ${res.status}: ${res.text}`);
  assert.deepEqual(res.envelope.response, { error: message, code });
}

export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** What a GET must answer: exactly these ids in this order, or 400 quoting this raw segment. */
export type Expected = readonly number[] | { readonly invalid: string };
/** [path after `/3.0/`, expected, certificate (default A)]. */
export type Row = readonly [path: string, expected: Expected, as?: 'a' | 'b' | 'c'];

export const invalid = (segment: string) => ({ invalid: segment });

/**
 * One describe per engine, each on its own service with the same data, running
 * the same rows: both engines must give the same answers.
 */
export function filterTable(title: string, rows: readonly Row[], extra?: (data: () => FilterData) => void): void {
  for (const kind of DB_KINDS) {
    describe(`${title} (${kind})`, () => {
      let data: FilterData;
      before(async () => { data = await startWithFilterData(kind); });
      after(() => stopService(data.svc));
      for (const [path, expected, as = 'a'] of rows) {
        it(`${as === 'a' ? '' : `[${as}] `}GET ${path}`, async () => {
          const res = await data[as].get(`/3.0/${path}`);
          if ('invalid' in expected) {
            assertError(res, 400, 'invalid_filter', `Invalid filter definition: ${expected.invalid}`);
          } else {
            assert.deepEqual(idsOf(res), expected);
            assert.deepEqual(res.envelope.pagination, { total_pages: expected.length ? 1 : 0, total_records: expected.length });
          }
        });
      }
      extra?.(() => data);
    });
  }
}
