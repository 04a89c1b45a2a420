// Tenant isolation, driven by the resource registry: every resource in
// RESOURCES is seeded in every company of a small tree and probed with every
// filter, update, delete and reference its definition allows, so that a new
// resource is covered without touching this file.
//
//   A (root) ─ A1 (child)        B (a separate root, "the other company")
//
// B must never see, count, change, delete or refer to anything of A's tree; A1
// must never see its parent's records; A sees A1's. References must stay inside
// the referring record's company; embedded records of another scope show null.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { relationFields } from '../../src/filter/resolve.ts';
import type { FieldDef, ResourceDef } from '../../src/model/types.ts';
import { RESOURCES } from '../../src/resources/registry.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import {
  type Caller, createBody, dataFor, idsIn, inSession, isTenancy, listAll, nextSerial, ownersOf, probesFor, type Rec, embedOf, idOf, rowCount, scopeOf, Seeded,
  seedOrder, type Tenant, UPDATE_CONTEXT, updateBody, writableIn,
} from '../support/isolation-data.ts';
import type { Inserted, LoggedIn, Updated } from '../support/api.ts';

// The change feed's records have no id of their own (they are keyed by seq): its scope is tested in changes.test.ts.
const DEFS: readonly ResourceDef[] = RESOURCES.map((r) => r.def).filter((d) => d.name !== 'changes');
const BY_NAME = new Map(DEFS.map((d) => [d.name, d]));
const lookup = (name: string): ResourceDef => {
  const d = BY_NAME.get(name);
  if (!d) throw new Error(`no resource ${name}`);
  return d;
};
const TENANCY = DEFS.find(isTenancy)!;
const invalidValue = (field: string) => `Field verification failed, invalid value for ${field}`;
const allNull = (fields: readonly string[]) => Object.fromEntries(fields.map((f) => [f, null]));
const sorted = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);
/** The service's date (its test clock stands still). */
const today = (svc: Service) => svc.clock.now().toISOString().slice(0, 10);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);

/** The field of a definition that places a record in a company, when a body may set it. */
const scopeField = (def: ResourceDef) => def.fields.find((f) => f.name === def.scopeColumn);
/** When the body cannot name the company, the first required same-company reference decides it (files, reminders: the asset). */
function ownerReference(def: ResourceDef): FieldDef | undefined {
  const own = scopeField(def);
  if (own && writableIn(own, 'create')) return undefined;
  return def.fields.find((f) => f.required && f.references?.rule === 'same-company');
}
const referenceFields = (def: ResourceDef, mode: 'create' | 'update') =>
  def.fields.filter((f) => f.references && writableIn(f, mode) && def.verbs.includes(mode === 'create' ? 'PUT' : 'POST'));

interface World {
  svc: Service;
  A: Tenant; A1: Tenant; B: Tenant;
  seeded: Seeded;
  /** A message a user of A sent into A1 (its sender is outside A1's scope). */
  crossMessage: number;
  parentUser: { id: number; username: string; password: string };
  impersonating: TestClient;
  /** Admin users of A1 and of B, each in a session opened through A's impersonating certificate: their scope is their own company's. */
  sessions: Tenant[];
}

function expectStatus(res: { status: number; text: string }, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: expected ${status}, got ${res.status}: ${res.text}`);
}

/** The record as `client` reads it by id, or undefined when it does not see it. */
async function readAs(client: Caller, def: ResourceDef, id: number): Promise<Rec | undefined> {
  const res = await client.get(`/3.0/${def.name}/id=${id}`);
  expectStatus(res, 200, `GET ${def.name}/id=${id}`);
  const rows = res.reply<Rec[]>();
  assert.ok(rows.length <= 1);
  return rows[0];
}

/** The target a reference of `f` would name in company `owner`: the company itself, or its seeded record. */
function targetIn(w: World, f: FieldDef, owner: Tenant): number {
  const resource = f.references!.resource;
  const id = resource === TENANCY.name ? owner.id : w.seeded.first(resource, owner.id);
  assert.ok(id !== undefined, `no seeded ${resource} of ${owner.name}`);
  return id;
}

/** Samples of `owner`'s records to probe with: what the seed created, plus its newest other record (audit entries). */
async function samplesOf(w: World, def: ResourceDef, owner: Tenant): Promise<number[]> {
  const seeded = w.seeded.of(def.name, owner.id);
  const owners = await ownersOf(w.svc, def);
  const others = [...owners].filter(([id, o]) => o === owner.id && !seeded.includes(id)).map(([id]) => id);
  return others.length > 0 ? [...seeded, Math.max(...others)] : seeded;
}

async function seed(svc: Service): Promise<World> {
  const aId = await svc.company('Company xA0x');
  const a1Id = await svc.company('Company xA1x', aId);
  const bId = await svc.company('Company xB0x');
  const tenant = async (name: string, id: number, label: string): Promise<Tenant> =>
    ({ name, id, label, client: (await svc.certificate(id)).client });
  const A = await tenant('A', aId, 'xA0x');
  const A1 = await tenant('A1', a1Id, 'xA1x');
  const B = await tenant('B', bId, 'xB0x');
  const seeded = new Seeded();
  for (const t of [A, A1, B]) seeded.add(TENANCY.name, t.id, t.id);
  for (const def of seedOrder(DEFS, TENANCY.name)) {
    if (!def.verbs.includes('PUT')) continue;
    for (const t of [A, A1, B]) {
      const body = createBody(def, t, seeded, TENANCY.name, today(svc));
      const res = await t.client.put(`/3.0/${def.name}`, body);
      expectStatus(res, 201, `seed PUT ${def.name} as ${t.name} ${JSON.stringify(body)}`);
      seeded.add(def.name, t.id, res.reply<Inserted>().ids[0]!);
    }
  }
  // Deliveries are written by the webhook dispatcher, never by a PUT: one per tenant's webhook, as it writes them.
  for (const t of [A, A1, B]) {
    const stamp = `${today(svc)} 04:05:06`;
    const row = await svc.database.db.insertInto('webhook_deliveries').values({
      webhook_id: seeded.first('webhooks', t.id)!, company_id: t.id, event_seq: t.id, event_id: `evt_${t.label}`, event: 'webhooks.created',
      attempt: 1, status: 'delivered', response_status: 200, error: null, created: stamp, next_attempt: null, modified: stamp,
    }).returning('id').executeTakeFirstOrThrow();
    seeded.add('webhookdeliveries', t.id, Number(row.id));
  }
  // The companies themselves carry data too, so that `company.data.*` filters have something to find.
  for (const t of [A, A1, B]) {
    const res = await t.client.post(`/3.0/${TENANCY.name}/id=${t.id}`, { data: dataFor(TENANCY, t) });
    expectStatus(res, 200, `POST companies/id=${t.id}`);
    assert.equal(res.reply<Updated>().records_updated, 1);
  }
  // A user of A, in a session, writes a message into A1 (in its scope): A1 then holds a record whose sender it may not see.
  const users = lookup('users');
  const parentUserId = seeded.first(users.name, A.id)!;
  const parentUser = { id: parentUserId, username: (await readAs(A.client, users, parentUserId))!.username as string, password: 'correct horse battery staple' };
  expectStatus(await A.client.post(`/3.0/password/id=${parentUserId}`, { new_password: parentUser.password }), 200, 'set password');
  const impersonating = (await svc.certificate(A.id, { impersonation: true })).client;
  const login = await impersonating.post('/3.0/login', { username: parentUser.username, password: parentUser.password });
  expectStatus(login, 200, 'login');
  const sent = await inSession(impersonating, login.reply<LoggedIn>().user_token).put('/3.0/messages', { company_id: A1.id,
    target_user_id: seeded.first(users.name, A1.id), messagetext: 'a note from the parent company' });
  expectStatus(sent, 201, 'session PUT messages into A1');
  // Users of A1 and B log in through A's certificate (a user may belong to any company).
  const sessions: Tenant[] = [];
  for (const t of [A1, B]) {
    const userId = seeded.first(users.name, t.id)!;
    const username = (await readAs(t.client, users, userId))!.username as string;
    const password = `password of ${t.label}`;
    expectStatus(await t.client.post(`/3.0/users/id=${userId}`, { permissions: { level: 'admin', can_create_companies: true } }), 200, 'make admin');
    expectStatus(await t.client.post(`/3.0/password/id=${userId}`, { new_password: password }), 200, 'set password');
    const res = await impersonating.post('/3.0/login', { username, password });
    expectStatus(res, 200, `login ${username}`);
    sessions.push({ name: `${t.name}'s admin session through A's certificate`, id: t.id, label: t.label,
      client: inSession(impersonating, res.reply<LoggedIn>().user_token) });
  }
  return { svc, A, A1, B, seeded, crossMessage: sent.reply<Inserted>().ids[0]!, parentUser, impersonating, sessions };
}

/**
 * Asserts the viewer lists exactly the records of its scope (the database says
 * which), all counted; with `narrowed` (a session on a resource whose definition
 * narrows visibility, e.g. messages) at least nothing outside it.
 */
async function assertListsExactlyScope(w: World, viewer: Tenant, def: ResourceDef, narrowed = false): Promise<void> {
  const scope = await scopeOf(w.svc, viewer.id);
  const expected = sorted(await idsIn(w.svc, def, scope));
  const { records, total } = await listAll(viewer.client, def.name);
  const got = sorted(records.map(idOf));
  if (narrowed) {
    for (const id of got) assert.ok(expected.includes(id), `${viewer.name} GET ${def.name} lists ${id}, outside its scope`);
    assert.equal(total, got.length);
    return;
  }
  assert.deepEqual(got, expected, `${viewer.name} GET ${def.name}`);
  assert.equal(total, expected.length, `${viewer.name} GET ${def.name}: total_records`);
}

/** Every filter the definition allows on each sample of `owners`, as `viewer`: never the sample, only the viewer's records. */
async function assertProbesFindNothing(w: World, viewer: Tenant, def: ResourceDef, owners: readonly Tenant[]): Promise<number> {
  const visible = await idsIn(w.svc, def, await scopeOf(w.svc, viewer.id));
  const labels = owners.map((o) => o.label);
  let probes = 0;
  for (const owner of owners) {
    for (const id of await samplesOf(w, def, owner)) {
      const record = await readAs(w.A.client, def, id);
      assert.ok(record, `${def.name} ${id} of ${owner.name} is visible to A`);
      for (const p of probesFor(def, record, lookup, relationFields, labels)) {
        const path = `${def.name}/${p.segment}`;
        const { records, total } = await listAll(viewer.client, path);
        const ids = records.map(idOf);
        assert.ok(!ids.includes(id), `${viewer.name} GET ${path} found ${owner.name}'s record ${id}`);
        for (const x of ids) assert.ok(visible.has(x), `${viewer.name} GET ${path} found record ${x} outside its scope`);
        if (p.none) assert.equal(total, 0, `${viewer.name} GET ${path}: expected nothing, total_records=${total}`);
        probes++;
      }
    }
  }
  return probes;
}

/** Filters that single out a foreign record: its id, its company, and a JSON value only it holds. */
function targetingFilters(def: ResourceDef, record: Rec, label: string): string[] {
  const out = [`id=${idOf(record)}`, `${def.scopeColumn}=${record[def.scopeColumn] as number}`];
  const data = embedOf(record, 'data');
  if (data && typeof data === 'object' && typeof data.iso === 'string' && data.iso.includes(label)) {
    out.push(`data.iso=${encodeURIComponent(data.iso)}`);
  }
  const company = def.relations.find((r) => r.resource === TENANCY.name && r.via === def.scopeColumn);
  const embedded = company ? embedOf(record, company.name) : undefined;
  if (company && embedded?.name) out.push(`${company.name}.name=${encodeURIComponent(embedded.name as string)}`);
  return out;
}

async function assertCannotUpdate(w: World, viewer: Tenant, def: ResourceDef, owners: readonly Tenant[]): Promise<void> {
  const body = updateBody(def, viewer.label)!;
  for (const owner of owners) {
    for (const id of w.seeded.of(def.name, owner.id)) {
      const before = await readAs(w.A.client, def, id);
      assert.ok(before);
      for (const filter of targetingFilters(def, before, owner.label)) {
        const res = await viewer.client.post(`/3.0/${def.name}/${filter}`, body);
        expectStatus(res, 200, `${viewer.name} POST ${def.name}/${filter}`);
        assert.deepEqual(res.envelope.response, { records_updated: 0, records_found: 0 }, `${viewer.name} POST ${def.name}/${filter}`);
      }
      assert.deepEqual(await readAs(w.A.client, def, id), before, `${def.name} ${id} changed`);
    }
  }
}

async function assertCannotDelete(w: World, viewer: Tenant, def: ResourceDef, owners: readonly Tenant[]): Promise<void> {
  for (const owner of owners) {
    for (const id of w.seeded.of(def.name, owner.id)) {
      const before = await readAs(w.A.client, def, id);
      assert.ok(before);
      for (const filter of targetingFilters(def, before, owner.label)) {
        const res = await viewer.client.delete(`/3.0/${def.name}/${filter}`);
        expectStatus(res, 200, `${viewer.name} DELETE ${def.name}/${filter}`);
        assert.deepEqual(res.envelope.response, { records_deleted: 0, records_found: 0 }, `${viewer.name} DELETE ${def.name}/${filter}`);
      }
      assert.deepEqual(await readAs(w.A.client, def, id), before, `${def.name} ${id} changed or vanished`);
    }
  }
}

/**
 * `writer` creates (PUT) or changes (POST) a record of company `home` whose
 * reference names `foreign`'s record: 400 invalid value, nothing written.
 */
async function assertReferencesRefused(w: World, writer: Tenant, home: Tenant, def: ResourceDef, foreign: readonly Tenant[],
  o: { sameCompanyOnly: boolean; session?: boolean }): Promise<number> {
  let cases = 0;
  const relevant = (f: FieldDef) => !o.sameCompanyOnly || f.references!.rule === 'same-company';
  for (const f of referenceFields(def, 'create').filter(relevant)) {
    if (o.sameCompanyOnly && f === ownerReference(def)) continue;
    for (const owner of foreign) {
      const body = createBody(def, home, w.seeded, TENANCY.name, today(w.svc));
      // A wrong company makes every same-company reference wrong too; leave those out so the message is about the company.
      if (f.name === def.scopeColumn) {
        for (const g of def.fields) if (g !== f && !g.required && g.references?.rule === 'same-company') delete body[g.name];
      }
      body[f.name] = targetIn(w, f, owner);
      const count = await rowCount(w.svc, def.table);
      const res = await writer.client.put(`/3.0/${def.name}`, body);
      const what = `${writer.name} PUT ${def.name} in ${home.name} with ${f.name} of ${owner.name}`;
      expectStatus(res, 400, what);
      assert.equal(res.errorReply.error, invalidValue(f.name), what);
      assert.equal(await rowCount(w.svc, def.table), count, `${what}: a record was written`);
      cases++;
    }
  }
  for (const f of referenceFields(def, 'update').filter(relevant)) {
    const own: number | undefined = w.seeded.of(def.name, home.id).at(-1);
    if (own === undefined) throw new Error(`no seeded ${def.name} of ${home.name}`);
    for (const owner of foreign) {
      const before = await readAs(writer.client, def, own);
      assert.ok(before);
      const body = { ...UPDATE_CONTEXT[`${def.name}.${f.name}`], [f.name]: targetIn(w, f, owner) };
      const res = await writer.client.post(`/3.0/${def.name}/id=${own}`, body);
      const what: string = `${writer.name} POST ${def.name}/id=${own} (${home.name}) ${JSON.stringify(body)} naming ${owner.name}'s record`;
      if (o.session && UPDATE_CONTEXT[`${def.name}.${f.name}`]) {
        // The context (a release) is itself refused to a session, before anything is matched.
        expectStatus(res, 400, what);
        assert.equal(res.errorReply.error, 'Field verification failed, invalid field released', what);
      } else {
        expectStatus(res, 400, what);
        assert.equal(res.errorReply.error, invalidValue(f.name), what);
      }
      assert.deepEqual(await readAs(writer.client, def, own), before, `${what}: the record changed`);
      cases++;
    }
  }
  return cases;
}

/** The back-reference column of a one-to-many relation, per target record, from the database. */
async function backValues(svc: Service, target: ResourceDef, back: string): Promise<Map<number, number | null>> {
  const { rows } = await sql<{ id: number; back: number | null }>`SELECT id, ${sql.ref(back)} AS back
    FROM ${sql.table(target.table)}`.execute(svc.database.db);
  return new Map(rows.map((r) => [Number(r.id), r.back === null ? null : Number(r.back)]));
}

/** Every embed the viewer gets shows a record of its scope, or (outside it) all members null. Returns how many embeds it checked. */
async function assertEmbedsConfined(w: World, viewer: Tenant, def: ResourceDef): Promise<number> {
  const scope = await scopeOf(w.svc, viewer.id);
  const { records } = await listAll(viewer.client, def.name);
  let checked = 0;
  for (const rel of def.relations) {
    const target = lookup(rel.resource);
    const owners = await ownersOf(w.svc, target);
    const inScope = (id: number) => { const o = owners.get(id); return o !== undefined && o !== null && scope.has(o); };
    const fields = relationFields(rel, target).map((f) => f.name);
    const backs = rel.back ? await backValues(w.svc, target, rel.back) : new Map<number, number | null>();
    for (const r of records) {
      const what = `${viewer.name} GET ${def.name}: record ${idOf(r)} embed ${rel.name}`;
      if (rel.via) {
        const via = r[rel.via];
        const embedded = embedOf(r, rel.name);
        if (via === null) assert.deepEqual(embedded, rel.empty === 'null' ? null : allNull(fields), what);
        else if (inScope(via as number)) {
          assert.deepEqual(Object.keys(embedded!), fields, what);
          assert.equal(embedded!.id, via, what);
        } else {
          assert.deepEqual(embedded, allNull(fields), `${what} names ${JSON.stringify(via)}, outside the scope: all members must be null`);
        }
        checked++;
      } else if (rel.back) {
        const expected = sorted([...backs].filter(([id, b]) => b === r.id && inScope(id)).map(([id]) => id));
        assert.ok(Array.isArray(r[rel.name]), what);
        assert.deepEqual(sorted((r[rel.name] as Rec[]).map(idOf)), expected, what);
        checked++;
      }
    }
  }
  return checked;
}

for (const kind of DB_KINDS) {
  describe(`tenant isolation, registry-driven (${kind})`, () => {
    let svc: Service | undefined;
    let w: World;

    before(async () => {
      svc = await startService(kind);
      w = await seed(svc);
    });
    after(async () => {
      const server = svc?.app.https;
      await svc?.close();
      // The harness starts the listener itself, so Fastify's close leaves it open; close it so the run can end.
      if (server?.listening) {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
    });

    it('the seed holds records of every resource in every company', async () => {
      for (const def of DEFS) {
        const owners = await ownersOf(w.svc, def);
        for (const t of [w.A, w.A1, w.B]) {
          const n = [...owners.values()].filter((o) => o === t.id).length;
          assert.ok(n >= 1, `${def.name} has no record of ${t.name}`);
        }
      }
    });

    for (const def of DEFS) {
      describe(def.name, () => {
        it("B's certificate lists exactly B's scope: none of A's or A1's records, none counted", async () => {
          await assertListsExactlyScope(w, w.B, def);
        });

        it("A1's certificate lists exactly A1's scope: never its parent's records (child never sees parent)", async () => {
          await assertListsExactlyScope(w, w.A1, def);
        });

        it("A's certificate lists A1's records and counts them (parent sees children)", async () => {
          await assertListsExactlyScope(w, w.A, def);
          const ofA1 = sorted(await idsIn(w.svc, def, new Set([w.A1.id])));
          assert.ok(ofA1.length > 0);
          const { records, total } = await listAll(w.A.client, `${def.name}/${def.scopeColumn}=${w.A1.id}`);
          assert.deepEqual(sorted(records.map(idOf)), ofA1);
          assert.equal(total, ofA1.length);
        });

        it("B cannot filter into A's or A1's records (id, every own field, every embedded field, JSON paths)", async () => {
          const probes = await assertProbesFindNothing(w, w.B, def, [w.A, w.A1]);
          assert.ok(probes > 0);
        });

        it("A1 cannot filter into A's records", async () => {
          const probes = await assertProbesFindNothing(w, w.A1, def, [w.A]);
          assert.ok(probes > 0);
        });

        it("a session of an A1 or B user through A's certificate sees its user's scope, never A's", async () => {
          for (const viewer of w.sessions) await assertListsExactlyScope(w, viewer, def, def.visible !== undefined);
          const [ofA1, ofB] = w.sessions as [Tenant, Tenant];
          assert.ok(await assertProbesFindNothing(w, ofA1, def, [w.A]) > 0);
          assert.ok(await assertProbesFindNothing(w, ofB, def, [w.A, w.A1]) > 0);
        });

        if (def.verbs.includes('POST') && updateBody(def, 'x') !== null) {
          it("B, A1 and their sessions cannot update A's records (records_found 0, unchanged)", async () => {
            await assertCannotUpdate(w, w.B, def, [w.A, w.A1]);
            await assertCannotUpdate(w, w.A1, def, [w.A]);
            for (const session of w.sessions) await assertCannotUpdate(w, session, def, [w.A]);
          });
        }

        if (def.verbs.includes('DELETE')) {
          it("B, A1 and their sessions cannot delete A's records (records_found 0, still there)", async () => {
            await assertCannotDelete(w, w.B, def, [w.A, w.A1]);
            await assertCannotDelete(w, w.A1, def, [w.A]);
            for (const session of w.sessions) await assertCannotDelete(w, session, def, [w.A]);
          });
        }

        if (referenceFields(def, 'create').length + referenceFields(def, 'update').length > 0) {
          it("B, A1 and their sessions cannot refer to A's records in a body (400 invalid value, nothing written)", async () => {
            const cases = await assertReferencesRefused(w, w.B, w.B, def, [w.A, w.A1], { sameCompanyOnly: false })
              + await assertReferencesRefused(w, w.A1, w.A1, def, [w.A], { sameCompanyOnly: false })
              + await assertReferencesRefused(w, w.sessions[0]!, w.A1, def, [w.A], { sameCompanyOnly: false, session: true })
              + await assertReferencesRefused(w, w.sessions[1]!, w.B, def, [w.A, w.A1], { sameCompanyOnly: false, session: true });
            assert.ok(cases > 0);
          });
        }

        const crossCompany = referenceFields(def, 'create').filter((f) => f.references!.rule === 'same-company' && f !== ownerReference(def))
          .length + referenceFields(def, 'update').filter((f) => f.references!.rule === 'same-company').length;
        if (crossCompany > 0) {
          it('an A1 record cannot refer to an A record, even through A (same scope, another company)', async () => {
            const cases = await assertReferencesRefused(w, w.A, w.A1, def, [w.A], { sameCompanyOnly: true });
            assert.equal(cases, crossCompany);
          });
        }

        if (def.relations.length > 0) {
          it('embedded records outside the viewer\'s scope never leak (all members null)', async () => {
            let checked = 0;
            for (const viewer of [w.A, w.A1, w.B]) checked += await assertEmbedsConfined(w, viewer, def);
            assert.ok(checked > 0);
          });
        }
      });
    }

    describe('tenancy specifics', () => {
      it('A1 sees only its own companies; its parentcompany embed is all null and filters see it as NULL', async () => {
        const { A, A1 } = w;
        const companyFields = relationFields(TENANCY.relations.find((r) => r.name === 'parentcompany')!, TENANCY).map((f) => f.name);
        const { records } = await listAll(A1.client, 'companies');
        const expected = sorted(await idsIn(w.svc, TENANCY, await scopeOf(w.svc, A1.id)));
        assert.deepEqual(sorted(records.map(idOf)), expected);
        assert.ok(!records.some((r) => r.id === A.id));
        const self = records.find((r) => r.id === A1.id)!;
        assert.deepEqual(self.parentcompany, allNull(companyFields));
        const none = async (path: string) => {
          const got = await listAll(A1.client, path);
          assert.equal(got.total, 0, `A1 GET ${path}: ${JSON.stringify(got.records.map(idOf))}`);
        };
        await none(`companies/parentcompany.name=${encodeURIComponent('Company xA0x')}`);
        await none('companies/parentcompany.name~xA0x');
        await none(`companies/parentcompany.id=${A.id}`);
        await none('companies/parentcompany.data.iso=xA0x-companies');
        await none(`companies/parent_id=${A.id}/parentcompany.id=${A.id}`);
        const nulls = await listAll(A1.client, 'companies/parentcompany.name=%3CNULL%3E');
        assert.deepEqual(nulls.records.map(idOf), [A1.id]);
        const nullIds = await listAll(A1.client, 'companies/parentcompany.id=%3CNULL%3E');
        assert.deepEqual(nullIds.records.map(idOf), [A1.id]);
        // A sees the same record with its parent embedded.
        const fromA = await readAs(A.client, TENANCY, A1.id);
        const parent = fromA ? embedOf(fromA, 'parentcompany') : undefined;
        assert.equal(parent?.id, A.id);
        assert.equal(parent?.name, 'Company xA0x');
      });

      it("B's companies are B's subtree only; B is a root (parentcompany null)", async () => {
        const { records } = await listAll(w.B.client, 'companies');
        assert.deepEqual(sorted(records.map(idOf)), sorted(await idsIn(w.svc, TENANCY, await scopeOf(w.svc, w.B.id))));
        assert.equal(records.find((r) => r.id === w.B.id)?.parentcompany, null);
      });

      it('a message a user of A sent into A1: A1 sees its sender as all null and cannot filter on it', async () => {
        const { A, A1, crossMessage, parentUser } = w;
        const userFields = relationFields(lookup('messages').relations.find((r) => r.name === 'sender')!, lookup('users')).map((f) => f.name);
        const seen = await readAs(A1.client, lookup('messages'), crossMessage);
        assert.ok(seen, 'A1 sees the message of its company');
        assert.deepEqual(seen.sender, allNull(userFields));
        assert.equal(embedOf(seen, 'recipient')!.id, w.seeded.first('users', A1.id));
        const fromA = await readAs(A.client, lookup('messages'), crossMessage);
        assert.equal((fromA ? embedOf(fromA, 'sender') : undefined)?.username, parentUser.username);
        for (const path of [`messages/sender.username=${parentUser.username}`, `messages/sender.id=${parentUser.id}`,
          `messages/sender.company_id=${A.id}`, 'messages/sender.data.iso=xA0x-users']) {
          assert.equal((await listAll(A1.client, path)).total, 0, `A1 GET ${path}`);
        }
        const byNull = await listAll(A1.client, `messages/sender.username=%3CNULL%3E/id=${crossMessage}`);
        assert.deepEqual(byNull.records.map(idOf), [crossMessage]);
        // Its audit entry (A1's, written by A's user) hides the user the same way.
        const entries = await listAll(A1.client, `auditlog/endpoint=messages/record_id=${crossMessage}`);
        assert.equal(entries.total, 1);
        assert.equal(entries.records[0]!.company_id, A1.id);
        assert.deepEqual(entries.records[0]!.user, allNull(userFields));
        assert.equal((await listAll(A1.client, `auditlog/user.username=${parentUser.username}`)).total, 0);
      });

      it("the audit log: B never sees or counts A's entries, A1 never sees A's, A sees A1's", async () => {
        const { A, A1, B } = w;
        const audit = lookup('auditlog');
        const asset = (await readAs(A.client, lookup('assets'), w.seeded.first('assets', A.id)!))!;
        const note = (await readAs(A.client, audit, w.seeded.first('auditlog', A.id)!))!;
        const ofA = await idsIn(w.svc, audit, new Set([A.id]));
        assert.ok(ofA.size > 5, 'A wrote entries');
        for (const viewer of [B, A1]) {
          const { records, total } = await listAll(viewer.client, 'auditlog');
          assert.ok(records.every((r) => !ofA.has(idOf(r))), `${viewer.name} sees A's audit entries`);
          assert.equal(total, (await idsIn(w.svc, audit, await scopeOf(w.svc, viewer.id))).size);
          for (const path of [`auditlog/asset_id=${idOf(asset)}`, `auditlog/endpoint=assets/record_id=${idOf(asset)}`,
            `auditlog/asset.asset_no=${encodeURIComponent(asset.asset_no as string)}`, `auditlog/newdata.asset_no=${encodeURIComponent(asset.asset_no as string)}`,
            `auditlog/message=${encodeURIComponent(note.message as string)}`, `auditlog/company_id=${A.id}`, `auditlog/company.id=${A.id}`,
            'auditlog/newdata.data.iso=xA0x-assets', 'auditlog/newdata~xA0x']) {
            assert.equal((await listAll(viewer.client, path)).total, 0, `${viewer.name} GET ${path}`);
          }
        }
        const ofA1 = await idsIn(w.svc, audit, new Set([A1.id]));
        const fromA = await listAll(A.client, `auditlog/company_id=${A1.id}`);
        assert.deepEqual(sorted(fromA.records.map(idOf)), sorted(ofA1));
      });
    });

    describe('endpoints outside the registry', () => {
      it("moveasset: B cannot move A's asset, nor move its own into A; A1 cannot move into A", async () => {
        const { A, A1, B } = w;
        const assets = lookup('assets');
        const aAsset = w.seeded.first('assets', A.id)!;
        const bAsset = w.seeded.first('assets', B.id)!;
        const a1Asset = w.seeded.first('assets', A1.id)!;
        const beforeA = await readAs(A.client, assets, aAsset);
        const beforeB = await readAs(B.client, assets, bAsset);
        const beforeA1 = await readAs(A1.client, assets, a1Asset);
        for (const [client, body, field] of [[B.client, { asset_id: aAsset, company_id: B.id }, 'asset_id'],
          [B.client, { asset_id: a1Asset, company_id: B.id }, 'asset_id'], [B.client, { asset_id: bAsset, company_id: A.id }, 'company_id'],
          [A1.client, { asset_id: a1Asset, company_id: A.id }, 'company_id'], [A1.client, { asset_id: aAsset, company_id: A1.id }, 'asset_id'],
        ] as const) {
          const res = await client.post('/3.0/moveasset', body);
          expectStatus(res, 400, `moveasset ${JSON.stringify(body)}`);
          assert.equal(res.errorReply.error, invalidValue(field));
        }
        assert.deepEqual(await readAs(A.client, assets, aAsset), beforeA);
        assert.deepEqual(await readAs(B.client, assets, bAsset), beforeB);
        assert.deepEqual(await readAs(A1.client, assets, a1Asset), beforeA1);
      });

      it("upload: B and A1 can neither read nor replace the content of A's file", async () => {
        const { A, A1, B } = w;
        const files = lookup('files');
        const file = (await readAs(A.client, files, w.seeded.first('files', A.id)!))!;
        const path = new URL(file.upload_endpoint as string).pathname;
        const token = path.split('/').at(-1)!;
        const missing = `Upload ${token} does not exist`;
        for (const viewer of [B, A1]) {
          const res = await viewer.client.post(path, PNG, { headers: { 'content-type': 'application/octet-stream' } });
          expectStatus(res, 404, `${viewer.name} POST ${path}`);
          assert.equal(res.errorReply.error, missing);
        }
        assert.deepEqual(await readAs(A.client, files, idOf(file)), file);
        expectStatus(await A.client.post(path, PNG, { headers: { 'content-type': 'application/octet-stream' } }), 200, 'A uploads');
        const own = await A.client.get(path);
        expectStatus(own, 200, 'A reads its upload');
        for (const viewer of [B, A1]) {
          const res = await viewer.client.get(path);
          expectStatus(res, 404, `${viewer.name} GET ${path}`);
          assert.equal(res.errorReply.error, missing);
          assert.ok(!res.text.includes('PNG'));
        }
      });

      it("password: B and A1 cannot set the password of A's user", async () => {
        const { B, A1, parentUser } = w;
        for (const viewer of [B, A1]) {
          const res = await viewer.client.post(`/3.0/password/id=${parentUser.id}`, { new_password: `taken-over-${nextSerial()}-password` });
          expectStatus(res, 200, `${viewer.name} POST password`);
          assert.deepEqual(res.envelope.response, { records_updated: 0, records_found: 0 });
        }
        const login = await w.impersonating.post('/3.0/login', { username: parentUser.username, password: parentUser.password });
        expectStatus(login, 200, 'the old password still works');
      });

      it("metadata: B's custom keys never include A's, A1's never its parent's, A's include A1's", async () => {
        const text = async (t: Tenant) => {
          const res = await t.client.get('/3.0/metadata');
          expectStatus(res, 200, `${t.name} GET metadata`);
          return res.text;
        };
        const b = await text(w.B);
        assert.ok(b.includes('own_xB0x'));
        assert.ok(!b.includes('xA0x') && !b.includes('xA1x'), b);
        const a1 = await text(w.A1);
        assert.ok(a1.includes('own_xA1x'));
        assert.ok(!a1.includes('xA0x'), a1);
        const a = await text(w.A);
        assert.ok(a.includes('own_xA0x') && a.includes('own_xA1x'));
      });
    });

    // Last: these create records whose values mirror A's (they would disturb the probes above).
    describe('values unique per company', () => {
      for (const def of DEFS) {
        const perCompany = (def.unique ?? []).filter((cols) => cols.includes(def.scopeColumn) && cols.length > 1);
        if (perCompany.length === 0 || !def.verbs.includes('PUT')) continue;
        it(`${def.name}: B and A1 may reuse A's values (no 409 reveals them), A may not`, async () => {
          for (const columns of perCompany) {
            const fresh = createBody(def, w.A, w.seeded, TENANCY.name, today(w.svc));
            const field = (c: string) => def.fields.find((f) => f.name === c)!;
            for (const c of columns) if (c !== def.scopeColumn && field(c).type === 'int') fresh[c] = 100_000 + nextSerial();
            expectStatus(await w.A.client.put(`/3.0/${def.name}`, fresh), 201, `A PUT ${def.name} ${JSON.stringify(fresh)}`);
            const copy = (t: Tenant) => {
              const body = createBody(def, t, w.seeded, TENANCY.name, today(w.svc));
              for (const c of columns) if (c !== def.scopeColumn) body[c] = fresh[c]!;
              return body;
            };
            const again = await w.A.client.put(`/3.0/${def.name}`, copy(w.A));
            expectStatus(again, 409, `A PUT ${def.name} repeating ${columns.join(', ')}`);
            for (const writer of [w.B, w.A1]) {
              const body = copy(writer);
              expectStatus(await writer.client.put(`/3.0/${def.name}`, body), 201, `${writer.name} PUT ${def.name} ${JSON.stringify(body)}`);
            }
          }
        });
      }
    });
  });
}
