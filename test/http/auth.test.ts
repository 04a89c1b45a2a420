// Authentication over real HTTPS with real certificates, and the
// trusted-proxy mode over plain HTTP. Every refusal is a 401 naming
// the SPKI fingerprint of what was presented, or `none`.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { addClient, revokeClient } from '../../src/admin/accounts.ts';
import { createSelfSigned, issueCertificate } from '../../src/tls/x509.ts';
import { chained, expired, selfSigned, type TestCert } from '../support/certs.ts';
import type { TestResponse } from '../support/client.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import { closePlain, escapedPem, listenPlain, noAccessMessage, plainRaw, plainRequest, spkiOf } from '../support/proxy.ts';
import type { AuditEntry, ErrorReply, Inserted } from '../support/api.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const FINGERPRINT = /^[0-9a-f]{64}$/;

function assertNoAccess(r: TestResponse, signature: string): void {
  assert.equal(r.status, 401, r.text);
  assert.equal(r.headers['content-type'], JSON_TYPE);
  assert.deepEqual(r.envelope.response, { error: noAccessMessage(signature), code: 'no_access' });
  assert.equal('pagination' in r.envelope, false);
}

function assertOk(r: TestResponse): void {
  assert.equal(r.status, 200, r.text);
  assert.equal((r.envelope.response as Partial<ErrorReply>).error, undefined);
}

/** Issuer equal to subject, but signed by another key: looks self-signed, is not. */
function forgedSelfSigned(cn: string): TestCert {
  const own = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const day = 86_400_000;
  const certPem = issueCertificate({ subject: cn, issuer: { name: cn, key: other.privateKey }, publicKey: createPublicKey(own.privateKey),
    signingKey: own.privateKey, notBefore: new Date(Date.now() - day), notAfter: new Date(Date.now() + day) });
  return { certPem, keyPem: own.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/**
 * Registers a certificate straight into the store, as an older version (or a hand-edited
 * store) might have: `client add` refuses the ones below that no call could use, so that
 * the refusal at every call is tested on its own.
 */
async function register(svc: Service, companyId: number, certPem: string): Promise<void> {
  await svc.database.db.insertInto('clients').values({
    company_id: companyId, name: 'registered as it is', fingerprint: spkiOf(certPem), impersonation: 0, created: '2026-01-01 00:00:00', revoked: null,
  }).execute();
}

/** `client add` (addClient) refuses a certificate every call would be refused with, and says why; it registers nothing. */
describe('registering a certificate the service would never accept', () => {
  let svc: Service;
  let company: number;
  before(async () => {
    svc = await startService(DB_KINDS[0]!);
    company = await svc.company('Registrar');
  });
  after(() => svc.close());

  const SELF_SIGNED_ONLY = "the service accepts self-signed client certificates only (the certificate's own key is the identity; "
    + 'no certificate authority vouches for it): `asset-tracker cert create DIR` makes one';
  const cases: [string, () => string, string | RegExp][] = [
    ['a chain (leaf and CA)', () => chained('chain').certPem, `the file holds a chain of 2 certificates; ${SELF_SIGNED_ONLY}`],
    ['a CA-issued leaf alone', () => chained('leaf').leafPem, `the certificate is issued by CN=leaf CA, not self-signed; ${SELF_SIGNED_ONLY}`],
    ['a forged self-signed certificate', () => forgedSelfSigned('forged').certPem,
      `the certificate names itself as its issuer, but its signature does not verify with its own key; ${SELF_SIGNED_ONLY}`],
    ['an expired certificate', () => expired('old').certPem, /^the certificate expired on \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4} GMT$/],
    ['a certificate not valid yet', () => createSelfSigned({ cn: 'future', days: 30, notBefore: new Date(Date.now() + 5 * 86_400_000) }).certPem,
      /^the certificate is not valid before \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4} GMT$/],
  ];
  for (const [what, pem, message] of cases) {
    it(`refuses ${what}, saying why`, async () => {
      const before = await svc.database.db.selectFrom('clients').select('id').execute();
      await assert.rejects(addClient(svc.database, { companyId: company, certPem: pem() }), (e: Error) => {
        if (typeof message === 'string') assert.equal(e.message, message);
        else assert.match(e.message, message);
        return true;
      });
      assert.deepEqual(await svc.database.db.selectFrom('clients').select('id').execute(), before);
    });
  }

  it('registers a current self-signed certificate', async () => {
    const cert = selfSigned('fine');
    const info = await addClient(svc.database, { companyId: company, certPem: cert.certPem });
    assertOk(await svc.client(cert).get('/3.0/endpoints'));
    assert.equal(info.fingerprint, spkiOf(cert.certPem));
  });
});

for (const kind of DB_KINDS) {
  describe(`certificate authentication over HTTPS (${kind})`, () => {
    let svc: Service;
    let company: number;

    before(async () => {
      svc = await startService(kind);
      company = await svc.company('Acme');
    });
    after(() => svc.close());

    it('a registered self-signed certificate gets in; its fingerprint is the SPKI SHA-256', async () => {
      const { cert, info, client } = await svc.certificate(company);
      assert.match(info.fingerprint, FINGERPRINT);
      assert.equal(info.fingerprint, spkiOf(cert.certPem));
      assertOk(await client.get('/3.0/endpoints'));
    });

    it('no certificate → 401 with signature none, as an exact error envelope', async () => {
      const r = await svc.client(null).get('/3.0/assets/id>3');
      assertNoAccess(r, 'none');
      const t = Math.floor(svc.clock.now().getTime() / 1000);
      assert.equal(r.text, '{"request":{"url":"/3.0/assets/id>3","endpoint":"assets","requested_version":"3.0","api_version":3,'
        + `"request_method":"Get","timestamp":${t},"session":null},`
        + '"response":{"error":"You do not have access to the API. Your signature: none","code":"no_access"}}');
    });

    it('an unknown (unregistered) certificate → 401 with its fingerprint', async () => {
      const cert = selfSigned('stranger');
      assertNoAccess(await svc.client(cert).get('/3.0/endpoints'), spkiOf(cert.certPem));
    });

    it('a revoked certificate → 401 with its fingerprint, also on an already open connection', async () => {
      const { cert, info, client } = await svc.certificate(company);
      assertOk(await client.get('/3.0/endpoints'));
      await revokeClient(svc.database, info.id);
      assertNoAccess(await client.get('/3.0/endpoints'), spkiOf(cert.certPem));
      assertNoAccess(await svc.client(cert).get('/3.0/endpoints'), spkiOf(cert.certPem));
    });

    it('a certificate registered or revoked by another process is known at once (or, on PostgreSQL, within moments)', async () => {
      const other = svc.reopen();
      try {
        const cert = selfSigned('elsewhere');
        const client = svc.client(cert);
        assertNoAccess(await client.get('/3.0/endpoints'), spkiOf(cert.certPem));
        const info = await addClient(other, { companyId: company, certPem: cert.certPem });
        assertOk(await eventually(() => client.get('/3.0/endpoints'), (r) => r.status === 200));
        await revokeClient(other, info.id);
        assertNoAccess(await eventually(() => client.get('/3.0/endpoints'), (r) => r.status === 401), spkiOf(cert.certPem));
      } finally {
        await other.close();
      }
    });

    it('an expired registered certificate → 401 with its fingerprint', async () => {
      const cert = expired('old');
      await register(svc, company, cert.certPem);
      assertNoAccess(await svc.client(cert).get('/3.0/endpoints'), spkiOf(cert.certPem));
    });

    it('a registered certificate that is not yet valid → 401 with its fingerprint', async () => {
      const cert = createSelfSigned({ cn: 'future', days: 30, notBefore: new Date(Date.now() + 5 * 86_400_000) });
      await register(svc, company, cert.certPem);
      assertNoAccess(await svc.client(cert).get('/3.0/endpoints'), spkiOf(cert.certPem));
    });

    it('a CA-issued certificate presented with its chain → 401 with the leaf fingerprint, even when its key is registered', async () => {
      const cert = chained('chained');
      await register(svc, company, cert.leafPem);
      assertNoAccess(await svc.client(cert).get('/3.0/endpoints'), spkiOf(cert.leafPem));
    });

    it('a CA-issued certificate presented alone (not self-signed) → 401 with its fingerprint', async () => {
      const cert = chained('leaf-only');
      await register(svc, company, cert.leafPem);
      assertNoAccess(await svc.client({ certPem: cert.leafPem, keyPem: cert.keyPem }).get('/3.0/endpoints'), spkiOf(cert.leafPem));
    });

    it('a certificate whose issuer equals its subject but whose signature does not verify → 401', async () => {
      const cert = forgedSelfSigned('forged');
      await register(svc, company, cert.certPem);
      assertNoAccess(await svc.client(cert).get('/3.0/endpoints'), spkiOf(cert.certPem));
    });

    it('a re-issued certificate with the same key keeps access; a new key does not', async () => {
      const { cert } = await svc.certificate(company);
      const reissued = createSelfSigned({ cn: 'renamed on renewal', days: 90, keyPem: cert.keyPem });
      assert.notEqual(reissued.certPem, cert.certPem);
      assertOk(await svc.client(reissued).get('/3.0/endpoints'));
      const rekeyed = createSelfSigned({ cn: 'renamed on renewal', days: 90 });
      assertNoAccess(await svc.client(rekeyed).get('/3.0/endpoints'), spkiOf(rekeyed.certPem));
    });

    it('a re-issued certificate with the same key that has expired → 401', async () => {
      const { cert } = await svc.certificate(company);
      const lapsed = createSelfSigned({ cn: 'lapsed', days: 1, keyPem: cert.keyPem, notBefore: new Date(Date.now() - 10 * 86_400_000) });
      assertNoAccess(await svc.client(lapsed).get('/3.0/endpoints'), spkiOf(cert.certPem));
    });

    it('401 comes before 404 (version, endpoint), 405 (verb), 413 (size) and 400 (filters, body)', async () => {
      const stranger = selfSigned('order');
      const fp = spkiOf(stranger.certPem);
      const cases: [string, string, string | undefined][] = [
        ['GET', '/3.0/nosuchendpoint', undefined],
        ['GET', '/2.0/assets', undefined],
        ['POST', '/3.0/endpoints', '{}'],
        ['OPTIONS', '/3.0/assets', undefined],
        ['DELETE', '/3.0/auditlog/id=1', undefined],
        ['GET', '/3.0/assets/idd=3', undefined],
        ['PUT', '/3.0/assets', '{"asset_no":'],
        ['PUT', '/3.0/assets', JSON.stringify({ asset_no: 'x'.repeat(2 * 1024 * 1024) })],
      ];
      for (const [method, path, body] of cases) {
        assertNoAccess(await svc.client(null).request(method, path, body === undefined ? {} : { body }), 'none');
        assertNoAccess(await svc.client(stranger).request(method, path, body === undefined ? {} : { body }), fp);
      }
    });

    it('with a registered certificate the same requests get their own errors', async () => {
      const { client } = await svc.certificate(company);
      assert.equal((await client.get('/3.0/nosuchendpoint')).status, 404);
      assert.equal((await client.get('/2.0/assets')).status, 404);
      assert.equal((await client.request('OPTIONS', '/3.0/assets')).status, 405);
      assert.equal((await client.get('/3.0/assets/idd=3')).status, 400);
    });

    it('paths outside the versioned space need no certificate', async () => {
      const anonymous = svc.client(null);
      assert.equal((await anonymous.get('/healthz')).status, 200);
      assert.equal((await anonymous.get('/readyz')).status, 200);
      const openapi = await anonymous.get('/openapi.json');
      assert.equal(openapi.status, 200);
      assert.equal(typeof (openapi.body as { openapi?: unknown }).openapi, 'string');
    });

    it('without proxy settings there is no plain-HTTP listener', () => {
      assert.equal(svc.app.http, null);
    });
  });

  describe(`trusted-proxy mode (${kind})`, () => {
    const HEADER = 'X-SSL-Client-Cert';
    let svc: Service;
    let port: number;
    let company: number;
    let registered: TestCert;

    before(async () => {
      svc = await startService(kind, { proxy: { trusted: ['127.0.0.1', '10.0.0.0/8'], header: HEADER } });
      port = await listenPlain(svc.app);
      company = await svc.company('Proxied');
      registered = (await svc.certificate(company)).cert;
    });
    after(async () => {
      await closePlain(svc.app);
      await svc.close();
    });

    const viaProxy = (path: string, headers: Record<string, string | string[]> = {}, method = 'GET', body?: string) =>
      plainRequest(port, method, path, { headers, ...(body === undefined ? {} : { body }) });

    it('a registered certificate in the header from a trusted address gets in', async () => {
      const r = await viaProxy('/3.0/endpoints', { [HEADER]: escapedPem(registered.certPem) });
      assertOk(r);
      assert.equal(r.headers['content-type'], JSON_TYPE);
      assert.equal(r.reply<unknown[]>().length, 16);
    });

    it('the audit entry records the client address read from X-Forwarded-For, never one the client chose', async () => {
      const cases: readonly [readonly string[], string][] = [
        [['1.2.3.4, 8.8.8.8:123'], '8.8.8.8'],
        [['1.2.3.4, garbage'], '127.0.0.1'],
        [['1.2.3.4, unknown'], '127.0.0.1'],
        [['1.2.3.4, [2001:db8::1]:443'], '2001:db8::1'],
        [['203.0.113.7, 10.0.0.5'], '203.0.113.7'],
        [['1.2.3.4', '198.51.100.9'], '198.51.100.9'],
      ];
      for (const [forwarded, client] of cases) {
        const r = await viaProxy('/3.0/locations', { [HEADER]: escapedPem(registered.certPem), 'x-forwarded-for': [...forwarded] }, 'PUT',
          JSON.stringify({ description: `from ${client}` }));
        assert.equal(r.status, 201, r.text);
        const [id] = r.reply<Inserted>().ids;
        const { rows } = await sql<{ ip: string }>`SELECT ip FROM auditlog WHERE endpoint = 'locations' AND record_id = ${id}`.execute(svc.database.db);
        assert.equal(rows[0]?.ip, client, JSON.stringify(forwarded));
      }
    });

    it('the header name is matched case-insensitively', async () => {
      assertOk(await viaProxy('/3.0/endpoints', { 'x-ssl-client-cert': escapedPem(registered.certPem) }));
    });

    it('no header → 401 none', async () => {
      assertNoAccess(await viaProxy('/3.0/endpoints'), 'none');
    });

    it('an empty header counts as no certificate → 401 none', async () => {
      assertNoAccess(await viaProxy('/3.0/endpoints', { [HEADER]: '' }), 'none');
    });

    it('a repeated header → 401, even when both copies hold the registered certificate', async () => {
      for (const pair of [[registered.certPem, registered.certPem], [registered.certPem, selfSigned('other').certPem]]) {
        const r = await viaProxy('/3.0/endpoints', { [HEADER]: pair.map(escapedPem) });
        assert.equal(r.status, 401, r.text);
        assert.equal(r.errorReply.code, 'no_access');
        assert.ok(r.errorReply.error.startsWith('You do not have access to the API. Your signature: '), r.text);
      }
    });

    it('an unknown certificate in the header → 401 with its fingerprint', async () => {
      const cert = selfSigned('unknown-behind-proxy');
      assertNoAccess(await viaProxy('/3.0/endpoints', { [HEADER]: escapedPem(cert.certPem) }), spkiOf(cert.certPem));
    });

    it('a chained PEM in the header → 401 with the leaf fingerprint, even when the leaf key is registered', async () => {
      const cert = chained('proxied-chain');
      await register(svc, company, cert.leafPem);
      assertNoAccess(await viaProxy('/3.0/endpoints', { [HEADER]: escapedPem(cert.certPem) }), spkiOf(cert.leafPem));
    });

    it('an expired or revoked certificate in the header → 401 with its fingerprint', async () => {
      const old = expired('proxied-old');
      await register(svc, company, old.certPem);
      assertNoAccess(await viaProxy('/3.0/endpoints', { [HEADER]: escapedPem(old.certPem) }), spkiOf(old.certPem));
      const { cert, info } = await svc.certificate(company);
      assertOk(await viaProxy('/3.0/endpoints', { [HEADER]: escapedPem(cert.certPem) }));
      await revokeClient(svc.database, info.id);
      assertNoAccess(await viaProxy('/3.0/endpoints', { [HEADER]: escapedPem(cert.certPem) }), spkiOf(cert.certPem));
    });

    it('a header that holds no certificate → 401', async () => {
      const r = await viaProxy('/3.0/endpoints', { [HEADER]: 'not%20a%20certificate' });
      assert.equal(r.status, 401, r.text);
      assert.equal(r.errorReply.code, 'no_access');
    });

    it('401 comes before 404 and 405 on the plain listener too', async () => {
      assertNoAccess(await viaProxy('/3.0/nosuchendpoint'), 'none');
      assertNoAccess(await viaProxy('/3.0/endpoints', {}, 'DELETE'), 'none');
    });

    it('an unknown verb on the plain listener: 401 without the header, 405 with it; overlong lines → 414', async () => {
      const line = (headers: string) => `FOO /3.0/endpoints HTTP/1.1\r\nHost: localhost\r\n${headers}Connection: close\r\n\r\n`;
      const none = await plainRaw(port, line(''));
      assert.deepEqual([none.status, none.errorReply.error], [401, noAccessMessage('none')]);
      const r = await plainRaw(port, line(`${HEADER}: ${escapedPem(registered.certPem)}\r\n`));
      assert.deepEqual([r.status, r.envelope.response], [405, { error: 'Method FOO not supported on endpoint endpoints', code: 'method_not_allowed' }]);
      const long = await plainRaw(port, `GET /3.0/assets/description=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      assert.deepEqual([long.status, long.body], [414, { response: { error: 'Request line too long', code: 'too_long' } }]);
    });

    it('the header is ignored on the HTTPS listener', async () => {
      // No TLS certificate, a registered one in the header: still no certificate.
      assertNoAccess(await svc.client(null).get('/3.0/endpoints', { headers: { [HEADER]: escapedPem(registered.certPem) } }), 'none');
      // A registered TLS certificate and a stranger's in the header: the TLS one counts.
      const { client } = await svc.certificate(company);
      assertOk(await client.get('/3.0/endpoints', { headers: { [HEADER]: escapedPem(selfSigned('spoof').certPem) } }));
    });

    it('audit entries record the right-most X-Forwarded-For entry that is not a trusted proxy', async () => {
      const { client } = await svc.certificate(company);
      const cert = escapedPem(registered.certPem);
      const ipOf = async (xff: string | string[] | undefined): Promise<string | null> => {
        const headers: Record<string, string | string[]> = { [HEADER]: cert };
        if (xff !== undefined) headers['X-Forwarded-For'] = xff;
        const put = await viaProxy('/3.0/locations', headers, 'PUT', JSON.stringify({ description: 'via proxy' }));
        assert.equal(put.status, 201, put.text);
        const id = put.reply<Inserted>().ids[0]!;
        const log = await client.get(`/3.0/auditlog/endpoint=locations/record_id=${id}`);
        assert.equal(log.reply<AuditEntry[]>().length, 1, log.text);
        return log.reply<AuditEntry[]>()[0]!.ip;
      };
      assert.equal(await ipOf('203.0.113.7, 198.51.100.9, 10.1.2.3'), '198.51.100.9');
      assert.equal(await ipOf('198.51.100.20'), '198.51.100.20');
      assert.equal(await ipOf(['198.51.100.1', '198.51.100.2, 10.0.0.5']), '198.51.100.2');
      assert.equal(await ipOf('2001:db8::1, 10.9.9.9'), '2001:db8::1');
      assert.equal(await ipOf(undefined), '127.0.0.1');
    });

    it('on the HTTPS listener X-Forwarded-For is ignored: the entry has the connection address', async () => {
      const { client } = await svc.certificate(company);
      const put = await client.put('/3.0/locations', { description: 'direct' }, { headers: { 'X-Forwarded-For': '198.51.100.77' } });
      assert.equal(put.status, 201, put.text);
      const log = await client.get(`/3.0/auditlog/endpoint=locations/record_id=${put.reply<Inserted>().ids[0]}`);
      assert.equal(log.reply<AuditEntry[]>()[0]!.ip, '127.0.0.1');
    });
  });

  describe(`trusted-proxy mode, request from an untrusted address (${kind})`, () => {
    const HEADER = 'X-SSL-Client-Cert';
    let svc: Service;
    let port: number;
    let registered: TestCert;

    before(async () => {
      svc = await startService(kind, { proxy: { trusted: ['10.0.0.1'], header: HEADER } });
      port = await listenPlain(svc.app);
      registered = (await svc.certificate(await svc.company('Elsewhere'))).cert;
    });
    after(async () => {
      await closePlain(svc.app);
      await svc.close();
    });

    it('the header is ignored → 401 none, whatever X-Forwarded-For claims', async () => {
      const headers = { [HEADER]: escapedPem(registered.certPem) };
      assertNoAccess(await plainRequest(port, 'GET', '/3.0/endpoints', { headers }), 'none');
      assertNoAccess(await plainRequest(port, 'GET', '/3.0/endpoints', { headers: { ...headers, 'X-Forwarded-For': '10.0.0.1' } }), 'none');
    });
  });
}
