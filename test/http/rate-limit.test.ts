// Requests per certificate over real HTTPS: the burst goes through,
// then 429 `rate_limited` with Retry-After; every response says what is left
// (X-RateLimit-*, RateLimit-Policy, RateLimit); sessions count against their
// certificate; a certificate the service does not know is limited before any
// database work; other certificates are not affected.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RateLimiter } from '../../src/ratelimit/limiter.ts';
import { selfSigned } from '../support/certs.ts';
import type { TestClient, TestResponse } from '../support/client.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { Api, makeUser } from '../support/sessions.ts';

const RATE = 5;
const BURST = 10;

function expectLimits(res: TestResponse, remaining: number, reset: number): void {
  assert.equal(res.headers['x-ratelimit-limit'], String(BURST), res.text);
  assert.equal(res.headers['x-ratelimit-remaining'], String(remaining));
  assert.equal(res.headers['x-ratelimit-reset'], String(reset));
  assert.equal(res.headers['ratelimit-policy'], `"default";q=${BURST};w=${BURST / RATE}`);
  assert.equal(res.headers.ratelimit, `"default";r=${remaining};t=${reset}`);
}

function expectLimited(res: TestResponse, wait: number): void {
  assert.equal(res.status, 429, res.text);
  assert.equal(res.headers['retry-after'], String(wait));
  assert.deepEqual(res.envelope.response, { error: `Rate limit exceeded, retry in ${wait} seconds`, code: 'rate_limited' });
}

for (const kind of DB_KINDS) {
  describe(`rate limit per certificate (${kind})`, () => {
    let svc: Service;
    let company: number;
    before(async () => {
      let now = (): number => Date.now();
      svc = await startService(kind, { rateLimiter: new RateLimiter({ rate: RATE, burst: BURST }, null, { now: () => now() }) });
      now = () => svc.clock.now().getTime();
      company = await svc.company('Limited');
    });
    after(async () => svc.close());

    const spend = async (client: TestClient, n: number) => {
      for (let i = 1; i <= n; i++) {
        const res = await client.get('/3.0/endpoints');
        assert.equal(res.status, 200, res.text);
        expectLimits(res, BURST - i, Math.ceil((i * 1000) / RATE / 1000));
      }
    };

    it('lets the burst through, then answers 429 with Retry-After until the bucket refills', async () => {
      const { client } = await svc.certificate(company);
      await spend(client, BURST);
      const refused = await client.get('/3.0/endpoints');
      expectLimited(refused, 1);
      expectLimits(refused, 0, 2);
      svc.clock.advance(1000 / RATE);
      assert.equal((await client.get('/3.0/endpoints')).status, 200);
      expectLimited(await client.get('/3.0/assets'), 1);
      svc.clock.advance(2000);
      await spend(client, BURST);
    });

    it('a 304 (If-None-Match) counts and says what is left like any answer', async () => {
      const { client } = await svc.certificate(company);
      const first = await client.get('/3.0/endpoints');
      expectLimits(first, BURST - 1, 1);
      const again = await client.get('/3.0/endpoints', { headers: { 'if-none-match': String(first.headers.etag) } });
      assert.equal(again.status, 304);
      expectLimits(again, BURST - 2, 1);
      svc.clock.advance(2000);
    });

    it('every certificate has a bucket of its own', async () => {
      const first = await svc.certificate(company);
      const second = await svc.certificate(company);
      await spend(first.client, BURST);
      expectLimited(await first.client.get('/3.0/endpoints'), 1);
      await spend(second.client, 3);
    });

    it('a certificate the service does not know is limited too, before it is looked up', async () => {
      const stranger = svc.client(selfSigned('stranger'));
      for (let i = 1; i <= BURST; i++) {
        const res = await stranger.get('/3.0/endpoints');
        assert.equal(res.status, 401, res.text);
        expectLimits(res, BURST - i, Math.ceil(i / RATE));
      }
      expectLimited(await stranger.get('/3.0/endpoints'), 1);
    });

    it('calls in a session count against their certificate', async () => {
      const c = await svc.certificate(company, { impersonation: true });
      const user = await makeUser(svc, company, { level: 'admin' });
      const session = await new Api(svc, c.client).session(user);
      // The login was the first request of the burst; the session and the certificate share the rest.
      for (let i = 2; i <= BURST; i++) {
        const res = i % 2 === 0 ? await session.get('companies') : await c.client.get('/3.0/endpoints');
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers['x-ratelimit-remaining'], String(BURST - i));
      }
      expectLimited(await session.get('companies'), 1);
      expectLimited(await c.client.get('/3.0/endpoints'), 1);
    });
  });
}
