// Idempotency-Key: a retried write with its key gets the first reply
// again, byte for byte, with `Idempotent-Replayed: true`, and writes nothing; the
// same key on another request is 422; while the first still runs, 409; refusals
// are not kept; keys belong to one certificate (and session user) and last 24 h,
// in the database, so that another instance over the same store replays them too.
import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { formatDatetime } from '../../src/model/dates.ts';
import { createSelfSigned } from '../../src/tls/x509.ts';
import type { TestCert } from '../support/certs.ts';
import { TestClient, type TestResponse } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { Api, makeUser } from '../support/sessions.ts';
import { countRows, create, expectError, expectOk, list, start, stop } from './resources-support.ts';
import type { Inserted, LoggedIn } from '../support/api.ts';

const keyed = (key: string) => ({ headers: { 'idempotency-key': key } });
const mismatch = (key: string) => `Idempotency-Key ${key} was used for another request`;
const BAD_KEY = 'Field verification failed, invalid value for Idempotency-Key';

/** The second answer is the first again: status and bytes, marked as replayed. */
function expectReplay(first: TestResponse, again: TestResponse): void {
  assert.equal(again.status, first.status, again.text);
  assert.equal(again.text, first.text);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(first.headers['idempotent-replayed'], undefined);
}

let keys = 0;
const newKey = () => `key-${Date.now()}-${++keys}`;

for (const kind of DB_KINDS) {
  describe(`Idempotency-Key (${kind})`, () => {
    let svc: Service;
    let api: TestClient;
    let apiCert: TestCert;
    let top: number;

    before(async () => {
      svc = await start(kind, { idempotencyWaitMs: 3000 });
      top = await svc.company('Top');
      ({ client: api, cert: apiCert } = await svc.certificate(top));
    });
    after(() => stop(svc));

    const assetCount = async (assetNo: string) => (await list(api, `assets/asset_no=${assetNo}`)).length;

    it('a PUT sent twice creates one asset; the retry gets the first reply byte for byte', async () => {
      const key = newKey();
      const first = await api.put('/3.0/assets', { asset_no: 'I-1' }, keyed(key));
      expectOk(first, 201);
      svc.clock.advance(3_000); // the envelope's timestamp would differ: the replay is the stored reply
      const again = await api.put('/3.0/assets', { asset_no: 'I-1' }, keyed(key));
      expectReplay(first, again);
      assert.equal(await assetCount('I-1'), 1);
    });

    it('twenty at once create one asset, and every reply is the same', async () => {
      const key = newKey();
      const replies = await Promise.all(Array.from({ length: 20 }, () => api.put('/3.0/assets', [{ asset_no: 'I-20' }], keyed(key))));
      assert.equal(await assetCount('I-20'), 1);
      const [one] = replies;
      for (const r of replies) {
        assert.equal(r.status, 201, r.text);
        assert.equal(r.text, one!.text);
      }
      assert.equal(replies.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 19);
    });

    it('POST and DELETE replay their counts, not what running again would give', async () => {
      const id = await create(api, 'locations', { description: 'gone soon' });
      const key = newKey();
      const first = await api.delete(`/3.0/locations/id=${id}`, keyed(key));
      assert.deepEqual(expectOk(first), { records_deleted: 1, records_found: 1 });
      expectReplay(first, await api.delete(`/3.0/locations/id=${id}`, keyed(key)));
      const loc = await create(api, 'locations', { description: 'x' });
      const post = newKey();
      const changed = await api.post(`/3.0/locations/id=${loc}`, { description: 'y' }, keyed(post));
      assert.deepEqual(expectOk(changed), { records_updated: 1, records_found: 1 });
      expectReplay(changed, await api.post(`/3.0/locations/id=${loc}`, { description: 'y' }, keyed(post)));
      assert.equal((await list(api, `locations/id=${loc}`))[0]!.version, 2, 'the replay wrote nothing');
    });

    it('the same key on another body, path or verb is 422, and nothing is written', async () => {
      const key = newKey();
      expectOk(await api.put('/3.0/assets', { asset_no: 'I-M' }, keyed(key)), 201);
      const before = await countRows(svc, 'assets');
      expectError(await api.put('/3.0/assets', { asset_no: 'I-M2' }, keyed(key)), 422, mismatch(key));
      expectError(await api.put('/3.0/locations', { asset_no: 'I-M' }, keyed(key)), 422, mismatch(key));
      expectError(await api.post('/3.0/assets/asset_no=I-M', { asset_no: 'I-M' }, keyed(key)), 422, mismatch(key));
      assert.equal(await countRows(svc, 'assets'), before);
      assert.equal(await assetCount('I-M2'), 0);
    });

    it('a refusal keeps nothing: the key runs again, even for another request', async () => {
      const key = newKey();
      expectError(await api.put('/3.0/assets', { asset_no: 'I-R', period: 'x' }, keyed(key)), 400,
        'Field verification failed, invalid value for period');
      expectError(await api.put('/3.0/assets', { asset_no: 'I-R', period: 'x' }, keyed(key)), 400,
        'Field verification failed, invalid value for period');
      const ok = await api.put('/3.0/assets', { asset_no: 'I-R' }, keyed(key));
      expectOk(ok, 201);
      // A 409 refused inside the write's transaction keeps nothing either.
      const dup = newKey();
      const refused = await api.put('/3.0/assets', { asset_no: 'I-R' }, keyed(dup));
      assert.equal(refused.status, 409, refused.text);
      expectOk(await api.put('/3.0/assets', { asset_no: 'I-R2' }, keyed(dup)), 201);
    });

    it('keys belong to their certificate and session user', async () => {
      const key = newKey();
      const mine = await api.put('/3.0/locations', { description: 'mine' }, keyed(key));
      const other = (await svc.certificate(top, { impersonation: true })).client;
      const theirs = await other.put('/3.0/locations', { description: 'mine' }, keyed(key));
      expectOk(theirs, 201);
      assert.notEqual(theirs.text, mine.text);
      assert.equal(theirs.headers['idempotent-replayed'], undefined);
      const users = new Api(svc, other);
      const a = await users.session(await makeUser(svc, top, { level: 'admin' }));
      const b = await users.session(await makeUser(svc, top, { level: 'admin' }));
      const byA = await a.put('locations', { description: 'session' }, keyed(key));
      expectOk(byA, 201);
      const byB = await b.put('locations', { description: 'session' }, keyed(key));
      expectOk(byB, 201);
      assert.notEqual(byA.reply<Inserted>().ids[0], byB.reply<Inserted>().ids[0]);
      expectReplay(byA, await a.put('locations', { description: 'session' }, keyed(key)));
      assert.equal((await list(api, 'locations/description=mine')).length, 2);
    });

    it('while the first request still runs, a retry waits, then gets 409; a claim left by a dead process is taken over', async () => {
      const { info, client } = await svc.certificate(top);
      const key = newKey();
      const claim = async (lockedUntil: Date) => sql`INSERT INTO idempotency_keys
        (client_id, user_id, ${sql.ref('key')}, verb, path, body_hash, owner, locked_until, expires)
        VALUES (${info.id}, 0, ${key}, 'PUT', '/3.0/assets', ${sha256('json\n{"asset_no":"I-F"}')}, 'elsewhere',
          ${formatDatetime(lockedUntil)}, ${formatDatetime(new Date(svc.clock.now().getTime() + 86_400_000))})`.execute(svc.database.db);
      await claim(new Date(svc.clock.now().getTime() + 60_000));
      const started = Date.now();
      expectError(await client.put('/3.0/assets', { asset_no: 'I-F' }, keyed(key)), 409, `A request with Idempotency-Key ${key} is still running`);
      assert.ok(Date.now() - started >= 2500, 'it waited for the first request');
      assert.equal(await assetCount('I-F'), 0);
      await sql`DELETE FROM idempotency_keys WHERE ${sql.ref('key')} = ${key}`.execute(svc.database.db);
      await claim(new Date(svc.clock.now().getTime() - 1_000));
      expectOk(await client.put('/3.0/assets', { asset_no: 'I-F' }, keyed(key)), 201);
      assert.equal(await assetCount('I-F'), 1);
    });

    it('a session\'s replay carries its own session block, and no token is ever stored', async () => {
      const { client } = await svc.certificate(top, { impersonation: true });
      const users = new Api(svc, client);
      const admin = await makeUser(svc, top, { level: 'admin' });
      const [one, two] = [await users.session(admin), await users.session(admin)];
      const key = newKey();
      const first = await one.put('locations', { description: 'two sessions' }, keyed(key));
      expectOk(first, 201);
      expectReplay(first, await one.put('locations', { description: 'two sessions' }, keyed(key)));
      const other = await two.put('locations', { description: 'two sessions' }, keyed(key));
      assert.equal(other.headers['idempotent-replayed'], 'true', 'the key is the user\'s');
      assert.deepEqual(other.envelope.response, first.envelope.response);
      assert.equal(other.envelope.request.session!.hash, two.token);
      assert.equal(other.envelope.request.timestamp, first.envelope.request.timestamp);
      const { rows } = await sql<{ response: string }>`SELECT response FROM idempotency_keys`.execute(svc.database.db);
      for (const r of rows) for (const token of [one.token!, two.token!]) assert.ok(!String(r.response).includes(token));
      // A login is not kept for a retry: its reply is a token.
      const again = await Promise.all([0, 1].map(() => users.login(admin.username, admin.password, {}, keyed('login-key'))));
      assert.notEqual(again[0]!.reply<LoggedIn>().user_token, again[1]!.reply<LoggedIn>().user_token);
    });

    it('what wrote nothing is not kept: a dry run, then the import with the same key, imports', async () => {
      const key = newKey();
      const csv = { headers: { 'content-type': 'text/csv', 'idempotency-key': key } };
      const dry = await api.put('/3.0/assets', 'asset_no\r\nDRY-1\r\n', { headers: { ...csv.headers, 'x-dry-run': 'true' } });
      assert.deepEqual(expectOk(dry), { records_valid: 1 });
      const real = await api.put('/3.0/assets', 'asset_no\r\nDRY-1\r\n', csv);
      assert.equal(expectOk<Inserted>(real, 201).records_inserted, 1);
      expectReplay(real, await api.put('/3.0/assets', 'asset_no\r\nDRY-1\r\n', csv));
      // The same bytes as JSON are another request.
      expectError(await api.put('/3.0/assets', 'asset_no\r\nDRY-1\r\n', keyed(key)), 422, mismatch(key));
      assert.equal(await assetCount('DRY-1'), 1);
    });

    it('the writes of their own kind replay too: a webhook with its secret, a note, a password, a move', async () => {
      const hook = newKey();
      const made = await api.put('/3.0/webhooks', { url: 'https://example.com/h', events: ['*'] }, keyed(hook));
      expectOk(made, 201);
      expectReplay(made, await api.put('/3.0/webhooks', { url: 'https://example.com/h', events: ['*'] }, keyed(hook)));
      assert.equal((await list(api, 'webhooks/url=https:%2F%2Fexample.com%2Fh')).length, 1);
      const note = newKey();
      const noted = await api.put('/3.0/auditlog', { message: 'kept once' }, keyed(note));
      expectReplay(noted, await api.put('/3.0/auditlog', { message: 'kept once' }, keyed(note)));
      assert.equal((await list(api, 'auditlog/message=kept+once')).length, 1);
      const user = await makeUser(svc, top);
      const before = (await list(api, `users/id=${user.id}`))[0]!.version;
      const pw = newKey();
      const set = await api.post(`/3.0/password/id=${user.id}`, { new_password: 'a-new-password' }, keyed(pw));
      expectOk(set);
      expectReplay(set, await api.post(`/3.0/password/id=${user.id}`, { new_password: 'a-new-password' }, keyed(pw)));
      assert.equal((await list(api, `users/id=${user.id}`))[0]!.version, before + 1, 'set once');
      const child = await svc.company('Moved to', top);
      const asset = await create(api, 'assets', { asset_no: 'MOVE-K' });
      const move = newKey();
      const moved = await api.post('/3.0/moveasset', { asset_id: asset, company_id: child }, keyed(move));
      expectOk(moved);
      expectReplay(moved, await api.post('/3.0/moveasset', { asset_id: asset, company_id: child }, keyed(move)));
      assert.equal((await list(api, `assets/id=${asset}`))[0]!.version, 2);
    });

    it('keys last 24 hours', async () => {
      const key = newKey();
      expectOk(await api.put('/3.0/locations', { description: 'day' }, keyed(key)), 201);
      svc.clock.advance(24 * 3_600_000 + 1_000);
      const later = await api.put('/3.0/locations', { description: 'day' }, keyed(key));
      expectOk(later, 201);
      assert.equal(later.headers['idempotent-replayed'], undefined);
      assert.equal((await list(api, 'locations/description=day')).length, 2);
    });

    it('a malformed key is 400; GET ignores the header', async () => {
      for (const bad of ['x'.repeat(256), 'é', 'tab\there']) {
        expectError(await api.put('/3.0/locations', { description: 'bad key' }, keyed(bad)), 400, BAD_KEY);
      }
      assert.equal((await list(api, 'locations/description=bad+key')).length, 0);
      const r = await api.get('/3.0/locations', keyed('x'.repeat(300)));
      assert.equal(r.status, 200);
    });

    it('another instance over the same store replays the key', async () => {
      const key = newKey();
      const first = await api.put('/3.0/assets', { asset_no: 'I-X' }, keyed(key));
      expectOk(first, 201);
      const database = svc.reopen();
      const tls = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'] });
      const second = await buildApp({ database, clock: svc.clock, tls: { key: tls.keyPem, cert: tls.certPem }, baseUrl: svc.baseUrl, logLevel: 'silent' });
      await new Promise<void>((r) => second.https.listen(0, '127.0.0.1', () => r()));
      const address = second.https.address();
      try {
        const port = typeof address === 'object' && address ? address.port : 0;
        // The key is the certificate's: the same certificate, through the other instance.
        const through = new TestClient(port, tls.certPem, apiCert);
        expectReplay(first, await through.put('/3.0/assets', { asset_no: 'I-X' }, keyed(key)));
        through.close();
      } finally {
        second.https.closeAllConnections();
        await new Promise<void>((r) => second.https.close(() => r()));
        await second.fastify.close();
        await database.close();
      }
      assert.equal(await assetCount('I-X'), 1);
    });
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
