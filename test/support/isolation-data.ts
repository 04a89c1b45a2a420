// Registry-driven data for the isolation tests: request bodies built from
// the resource definitions, a seed of every resource in every company, and an
// oracle of who owns what read straight from the database (never through the
// engine under test).
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { FieldDef, RelationDef, ResourceDef } from '../../src/model/types.ts';
import type { RequestOptions, TestClient } from './client.ts';
import type { Json, JsonObject } from './api.ts';
import type { Service } from './harness.ts';

export type { Json } from './api.ts';
/** A record or a request body, as JSON: its members are checked where they are read. */
export type Rec = JsonObject;
/** A record's id. */
export const idOf = (r: Rec): number => r.id as number;
/** The member of a record that embeds another record (null or absent where there is none). */
export const embedOf = (r: Rec, name: string) => r[name] as Rec | null | undefined;

/** What the tests call the API through: a certificate, or a certificate inside a session. */
export type Caller = Pick<TestClient, 'get' | 'post' | 'put' | 'delete'>;

/** `client` acting in the session `token`. */
export function inSession(client: TestClient, token: string): Caller {
  const headers = { authorization: `Basic ${Buffer.from(`session:${token}`).toString('base64')}` };
  const o = (x?: RequestOptions): RequestOptions => ({ ...x, headers: { ...headers, ...x?.headers } });
  return {
    get: (path, x) => client.get(path, o(x)),
    post: (path, body, x) => client.post(path, body, o(x)),
    put: (path, body, x) => client.put(path, body, o(x)),
    delete: (path, x) => client.delete(path, o(x)),
  };
}

/**
 * Who calls: `id` is the company whose tree is the caller's scope (the
 * certificate's, or in a session the user's), `label` a marker that only that
 * company's strings carry.
 */
export interface Tenant { readonly name: string; readonly id: number; readonly label: string; readonly client: Caller }

export const writableIn = (f: FieldDef, mode: 'create' | 'update') => f.writable === 'always' || f.writable === mode;

/** The resource whose records are the companies themselves (scope column `id`). */
export const isTenancy = (def: ResourceDef) => def.scopeColumn === 'id';

/** JSON keys a filter may name. */
const JSON_KEY = /^[A-Za-z0-9_$]+$/;

let serial = 0;
/** A fresh number so that repeated bodies never collide on unique values. */
export const nextSerial = () => ++serial;

/** The `data` of a record: a marker value, a key named after the owner, and untagged shared values. */
export const dataFor = (def: ResourceDef, t: Tenant): Json => ({
  iso: `${t.label}-${def.name}`, [`own_${t.label}`]: { deep: `${t.label}-deep`, num: 7 }, flag: true,
});

/**
 * A valid create body for `def` in tenant `t`, derived from the definition: every
 * create-writable field gets a value of its type (strings carry the tenant's
 * label, dates are the service's today), every reference names `t`'s seeded record of the target resource
 * (companies: `t` itself). Fields the definition cannot describe well enough
 * (bools, JSON other than `data`) keep their defaults.
 */
export function createBody(def: ResourceDef, t: Tenant, seeded: Seeded, companiesName: string, today: string): Rec {
  const n = nextSerial();
  const body: Rec = {};
  for (const f of def.fields) {
    if (!writableIn(f, 'create')) continue;
    if (f.references) {
      const target = f.references.resource === companiesName ? t.id : seeded.first(f.references.resource, t.id);
      if (target === undefined) throw new Error(`${def.name}.${f.name}: no seeded ${f.references.resource} of ${t.name}`);
      body[f.name] = target;
      continue;
    }
    const slug = `${def.name}-${f.name}-${t.label}-${n}`;
    // A check's type and result come from fixed lists; its next check must come after its date.
    if (def.name === 'assetchecks' && ['check_type', 'result', 'next_check'].includes(f.name)) {
      if (f.name !== 'next_check') body[f.name] = f.name === 'result' ? 'pass' : 'calibration';
      continue;
    }
    switch (f.type) {
      case 'string':
        // A webhook's url must be https.
        if (def.name === 'webhooks' && f.name === 'url') { body[f.name] = `https://example.com/${slug}`; break; }
        body[f.name] = f.format === 'email' ? `${slug.replace(/_/g, '')}@example.com` : f.format === 'filename' ? `${slug}.pdf` : slug;
        break;
      case 'int': body[f.name] = 6; break;
      // Today: a message is shown within its date range, which must hold for sessions to see it.
      case 'date': body[f.name] = today; break;
      case 'datetime': body[f.name] = `${today} 04:05:06`; break;
      case 'json': if (f.name === 'data') body[f.name] = dataFor(def, t); else if (def.name === 'webhooks' && f.name === 'events') body[f.name] = ['*']; break;
      case 'bool': break;
    }
  }
  return body;
}

/** A POST body that would change a record: its `data`, else its first writable string. */
export function updateBody(def: ResourceDef, label: string): Rec | null {
  const data = def.fields.find((f) => f.name === 'data' && writableIn(f, 'update'));
  if (data) return { data: { hacked: label } };
  const text = def.fields.find((f) => f.type === 'string' && writableIn(f, 'update') && !f.references && !f.format);
  return text ? { [text.name]: `hacked-${label}` } : null;
}

/**
 * What else a POST must carry for a reference to be checked at all (the queue's
 * `asset_id` is only accepted together with a release).
 */
export const UPDATE_CONTEXT: Readonly<Record<string, Rec>> = { 'assetqueue.asset_id': { released: 1 } };

/** Resources in an order where every create reference points at something seeded before. */
export function seedOrder(defs: readonly ResourceDef[], companiesName: string): ResourceDef[] {
  const out: ResourceDef[] = [];
  const done = new Set<string>([companiesName]);
  const pending = defs.filter((d) => d.name !== companiesName);
  const tenancy = defs.find((d) => d.name === companiesName);
  if (tenancy) out.push(tenancy);
  while (pending.length > 0) {
    const i = pending.findIndex((d) => d.fields.every((f) => !f.references || !writableIn(f, 'create')
      || f.references.resource === d.name || done.has(f.references.resource)));
    if (i < 0) throw new Error(`cannot order the seed: ${pending.map((d) => d.name).join(', ')}`);
    const [d] = pending.splice(i, 1);
    out.push(d!);
    done.add(d!.name);
  }
  return out;
}

/** Ids of the records the seed created, per resource and company. */
export class Seeded {
  private readonly ids = new Map<string, Map<number, number[]>>();
  add(resource: string, company: number, id: number): void {
    const byCompany = this.ids.get(resource) ?? new Map<number, number[]>();
    byCompany.set(company, [...(byCompany.get(company) ?? []), id]);
    this.ids.set(resource, byCompany);
  }
  of(resource: string, company: number): number[] { return this.ids.get(resource)?.get(company) ?? []; }
  first(resource: string, company: number): number | undefined { return this.of(resource, company)[0]; }
}

// ---- the database oracle -----------------------------------------------------------

/** A company and all its descendants, from the companies table. */
export async function scopeOf(svc: Service, root: number): Promise<Set<number>> {
  const rows = await svc.database.db.selectFrom('companies').select(['id', 'parent_id']).execute();
  const scope = new Set<number>([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows) {
      if (r.parent_id !== null && scope.has(Number(r.parent_id)) && !scope.has(Number(r.id))) { scope.add(Number(r.id)); grew = true; }
    }
  }
  return scope;
}

/** Record id → the company the record belongs to (its scope column), for every row of the resource's table. */
export async function ownersOf(svc: Service, def: ResourceDef): Promise<Map<number, number | null>> {
  const { rows } = await sql<{ id: number; owner: number | null }>`SELECT id, ${sql.ref(def.scopeColumn)} AS owner
    FROM ${sql.table(def.table)}`.execute(svc.database.db);
  return new Map(rows.map((r) => [Number(r.id), r.owner === null ? null : Number(r.owner)]));
}

/** Ids of the records of `def` whose company is inside `scope`. */
export async function idsIn(svc: Service, def: ResourceDef, scope: ReadonlySet<number>): Promise<Set<number>> {
  const owners = await ownersOf(svc, def);
  return new Set([...owners].filter(([, o]) => o !== null && scope.has(o)).map(([id]) => id));
}

export async function rowCount(svc: Service, table: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${sql.table(table)}`.execute(svc.database.db);
  return Number(rows[0]!.n);
}

// ---- reading through the API --------------------------------------------------------

export interface Listed { readonly records: Rec[]; readonly total: number; readonly pages: number }

/** Every page of a GET; asserts the pagination totals agree with what came back. */
export async function listAll(client: Caller, path: string): Promise<Listed> {
  const records: Rec[] = [];
  let total = -1;
  let pages = -1;
  for (let page = 1; ; page++) {
    const url = `/3.0/${path}${page > 1 ? `/page=${page}` : ''}`;
    const res = await client.get(url);
    assert.equal(res.status, 200, `GET ${url}: ${res.text}`);
    const { pagination } = res.envelope;
    const rows = res.reply<Rec[]>();
    if (page === 1) ({ total_records: total, total_pages: pages } = pagination!);
    else assert.equal(pagination!.total_records, total, `GET ${url}: total_records changed between pages`);
    records.push(...rows);
    if (rows.length === 0 || records.length >= total) break;
  }
  assert.equal(records.length, total, `GET /3.0/${path}: ${records.length} records listed but total_records=${total}`);
  return { records, total, pages };
}

/** A filter segment and whether nothing at all may match it for the viewer. */
export interface Probe { readonly segment: string; readonly none: boolean }

const enc = (v: string) => encodeURIComponent(v);

/** Filter segments on every scalar leaf of a JSON value (`data.k1.k2=v`), and `~label` on its text. */
function jsonProbes(prefix: string, value: Json, tagged: (s: string) => boolean): Probe[] {
  const out: Probe[] = [];
  const walk = (path: string, v: Json, keyTagged: boolean) => {
    if (v === null) return;
    if (typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) if (JSON_KEY.test(k)) walk(`${path}.${k}`, x, keyTagged || tagged(k));
      return;
    }
    if (Array.isArray(v)) return;
    out.push({ segment: `${path}=${enc(String(v))}`, none: keyTagged || (typeof v === 'string' && tagged(v)) });
  };
  walk(prefix, value, false);
  return out;
}

/**
 * Every filter a definition allows on a record, with the record's own values:
 * each own field (and `<endpoint>.id`), each field of each one-to-one embed, and
 * each JSON leaf, own or embedded. `none` marks values that only the record's
 * side of the tree can hold (ids, owner columns, same-company references, strings and keys carrying its label).
 */
export function probesFor(def: ResourceDef, record: Rec, lookup: (name: string) => ResourceDef,
  relationFields: (rel: RelationDef, target: ResourceDef) => readonly FieldDef[], labels: readonly string[]): Probe[] {
  const tagged = (s: string) => labels.some((l) => s.includes(l));
  const probes: Probe[] = [{ segment: `${def.name}.id=${idOf(record)}`, none: true }];
  const scalar = (path: string, f: FieldDef, v: Json | undefined, none: boolean) => {
    if (v === null || v === undefined) { probes.push({ segment: `${path}=%3CNULL%3E`, none: false }); return; }
    if (f.type === 'json') {
      probes.push(...jsonProbes(path, v, tagged));
      const text = JSON.stringify(v);
      for (const l of labels) if (text.includes(l)) probes.push({ segment: `${path}~${enc(l)}`, none: true });
      return;
    }
    probes.push({ segment: `${path}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`, none: none || (typeof v === 'string' && tagged(v)) });
    if (typeof v === 'string') for (const l of labels) if (v.includes(l)) probes.push({ segment: `${path}~${enc(l)}`, none: true });
  };
  // A foreign record's id, owner column and same-company references name nothing the viewer has. ('in-scope'
  // references may: a child company's parent_id names the parent, outside the child's scope.)
  const foreign = (f: FieldDef, owner: ResourceDef) => f.name === 'id' || f.name === owner.scopeColumn
    || f.references?.rule === 'same-company';
  for (const f of def.fields) scalar(f.name, f, record[f.name], foreign(f, def));
  for (const rel of def.relations) {
    if (!rel.via) continue;
    const embedded = embedOf(record, rel.name);
    if (embedded === null || embedded === undefined || embedded.id === null) continue;
    const target = lookup(rel.resource);
    for (const f of relationFields(rel, target)) scalar(`${rel.name}.${f.name}`, f, embedded[f.name], foreign(f, target));
  }
  return probes;
}
