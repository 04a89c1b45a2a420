// Login throttling (item 4): a doubling delay per username after each
// failed login, shared by every certificate and checked before the password; and
// an hourly failure budget per certificate. The service's clock is moved by hand.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestResponse } from '../support/client.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { Api, assertNoSecretsLeaked, BAD_LOGIN, expectError, expectOk, hours, makeUser, uniqueName } from '../support/sessions.ts';

const wait = (n: number) => `Can't retry login this soon after a failed authentication. Please wait ${n} seconds`;

/** A 429 of the login delay with `Retry-After` equal to the seconds in the message. */
function expectDelay(res: TestResponse, seconds: number): void {
  expectError(res, 429, wait(seconds));
  assert.equal(res.errorReply.code, 'rate_limited');
  assert.equal(res.headers['retry-after'], String(seconds));
}

for (const kind of DB_KINDS) {
  describe(`login throttling (${kind})`, () => {
    let svc: Service;
    let A: number;
    let api: Api; // impersonation certificate of A
    let api2: Api; // another impersonation certificate, of another company

    before(async () => {
      svc = await startService(kind);
      A = await svc.company('A');
      const B = await svc.company('B');
      api = new Api(svc, (await svc.certificate(A, { impersonation: true })).client);
      api2 = new Api(svc, (await svc.certificate(B, { impersonation: true })).client);
    });
    after(() => svc.close());

    it('after a failure the username waits 1 s, then 2 s, 4 s … doubling, capped at 15 minutes', async () => {
      const u = await makeUser(svc, A);
      let expected = 1;
      for (let failures = 1; failures <= 12; failures++) {
        expectError(await api.login(u.username, 'wrong-password'), 401, BAD_LOGIN);
        expectDelay(await api.login(u.username, 'wrong-password'), expected);
        // Whole seconds left, rounded up, never below 1.
        if (expected > 1) {
          svc.clock.advance(expected * 1000 - 1500);
          expectDelay(await api.login(u.username, 'wrong-password'), 2);
          svc.clock.advance(1000);
        } else {
          svc.clock.advance(500);
        }
        expectDelay(await api.login(u.username, 'wrong-password'), 1);
        svc.clock.advance(500);
        expected = Math.min(expected * 2, 900);
      }
      assert.equal(expected, 900);
      // The last delays were the cap.
      expectError(await api.login(u.username, 'wrong-password'), 401, BAD_LOGIN);
      expectDelay(await api.login(u.username, 'wrong-password'), 900);
      svc.clock.advance(900_000);
    });

    it('parallel guesses cannot slip past the delay: of 20 at once, one password is checked', async () => {
      const u = await makeUser(svc, A);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? api : api2).login(u.username, `wrong-${i}`)));
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [401, ...Array<number>(19).fill(429)], JSON.stringify(statuses));
      svc.clock.advance(2_000);
    });

    it('the delay is checked before the password: the right password still waits', async () => {
      const u = await makeUser(svc, A);
      expectError(await api.login(u.username, 'wrong-password'), 401, BAD_LOGIN);
      expectDelay(await api.login(u.username, u.password), 1);
      svc.clock.advance(1000);
      expectOk(await api.login(u.username, u.password));
    });

    it('the delay is shared by every certificate', async () => {
      const u = await makeUser(svc, A);
      expectError(await api.login(u.username, 'wrong-password'), 401, BAD_LOGIN);
      expectDelay(await api2.login(u.username, u.password), 1);
      svc.clock.advance(1000);
      expectError(await api2.login(u.username, 'wrong-password'), 401, BAD_LOGIN);
      expectDelay(await api.login(u.username, u.password), 2);
      svc.clock.advance(2000);
      expectOk(await api2.login(u.username, u.password));
    });

    it('a success resets the delay', async () => {
      const u = await makeUser(svc, A);
      for (const seconds of [1, 2, 4]) {
        expectError(await api.login(u.username, 'wrong-password'), 401, BAD_LOGIN);
        svc.clock.advance(seconds * 1000);
      }
      expectOk(await api.login(u.username, u.password));
      expectError(await api.login(u.username, 'wrong-password'), 401, BAD_LOGIN);
      expectDelay(await api.login(u.username, 'wrong-password'), 1);
      svc.clock.advance(1000);
      expectOk(await api.login(u.username, u.password));
    });

    it('unknown usernames are throttled too, and other usernames are not held up', async () => {
      const ghost = uniqueName('ghost');
      const u = await makeUser(svc, A);
      expectError(await api.login(ghost, 'wrong-password'), 401, BAD_LOGIN);
      expectDelay(await api.login(ghost, 'wrong-password'), 1);
      expectOk(await api.login(u.username, u.password));
      svc.clock.advance(1000);
      expectError(await api.login(ghost, 'wrong-password'), 401, BAD_LOGIN);
      expectDelay(await api2.login(ghost, 'wrong-password'), 2);
    });

    it('a certificate has an hourly budget of failed logins (LOGIN_FAILURES_PER_HOUR)', async () => {
      const small = await startService(kind, { loginFailuresPerHour: 3 });
      try {
        const C = await small.company('C');
        const c1 = new Api(small, (await small.certificate(C, { impersonation: true })).client);
        const c2 = new Api(small, (await small.certificate(C, { impersonation: true })).client);
        const u = await makeUser(small, C);
        // Three failures for three different usernames, spread over most of an hour.
        for (let i = 0; i < 3; i++) {
          expectError(await c1.login(uniqueName('nobody'), 'wrong-password'), 401, BAD_LOGIN);
          small.clock.advance(hours(0.25));
        }
        // The fourth attempt within the hour, even a right one, is refused until the hour is over.
        const left = 3600 - 3 * 900;
        expectDelay(await c1.login(uniqueName('nobody'), 'wrong-password'), left);
        expectDelay(await c1.login(u.username, u.password), left);
        // Other certificates keep their own budget.
        expectError(await c2.login(uniqueName('nobody'), 'wrong-password'), 401, BAD_LOGIN);
        expectOk(await c2.login(u.username, u.password));
        small.clock.advance(left * 1000 - 1000);
        expectDelay(await c1.login(u.username, u.password), 1);
        small.clock.advance(1000);
        expectOk(await c1.login(u.username, u.password));
        expectError(await c1.login(uniqueName('nobody'), 'wrong-password'), 401, BAD_LOGIN);
        await assertNoSecretsLeaked(small);
      } finally {
        await small.close();
      }
    });

    it('no password or token used above appears in the audit table or a response', async () => {
      await assertNoSecretsLeaked(svc);
    });
  });
}
