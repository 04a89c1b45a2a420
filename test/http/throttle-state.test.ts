// The login throttle's state stays bounded: a login refused because
// the certificate's failure budget is spent writes nothing, usernames are kept at
// a fixed size, rows older than the window are pruned, and failures made through
// two instances count against one budget.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { claimAttempt, sweepLoginThrottle } from '../../src/auth/throttle.ts';
import { DB_KINDS, type Service, startService } from '../support/harness.ts';
import { Api, BAD_LOGIN, expectError } from '../support/sessions.ts';

const BUDGET = 20;
const REFUSED = 10_000;
const PARALLEL = 16;

const rows = async (svc: Service) =>
  Number((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM login_throttle`.execute(svc.database.db)).rows[0]!.n);

for (const kind of DB_KINDS) {
  describe(`bounded login throttle state (${kind})`, () => {
    let svc: Service;
    let company: number;
    before(async () => {
      svc = await startService(kind, { loginFailuresPerHour: BUDGET });
      company = await svc.company('Sprayed');
    });
    after(() => svc.close());

    it(`${REFUSED} refused logins with distinct 900-character usernames leave at most the budget's rows`, async () => {
      const api = new Api(svc, (await svc.certificate(company, { impersonation: true })).client);
      const name = (i: number) => `${String(i).padStart(6, '0')}${'x'.repeat(894)}`;
      for (let i = 0; i < BUDGET; i++) expectError(await api.login(name(i), 'wrong password'), 401, BAD_LOGIN);
      let next = BUDGET;
      const statuses = new Map<number, number>();
      await Promise.all(Array.from({ length: PARALLEL }, async () => {
        for (let i = next++; i < BUDGET + REFUSED; i = next++) {
          const res = await api.login(name(i), 'wrong password');
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      }));
      assert.deepEqual([...statuses], [[429, REFUSED]]);
      assert.equal(await rows(svc), BUDGET);
      const { rows: keys } = await sql<{ username: string }>`SELECT username FROM login_throttle`.execute(svc.database.db);
      for (const k of keys) assert.match(k.username, /^[0-9a-f]{64}$/);
    });

    it('failures through two instances count against one budget, and old rows are pruned', async () => {
      const other = svc.reopen();
      try {
        const { info } = await svc.certificate(company, { impersonation: true });
        const t = new Date('2030-01-01T00:00:00Z');
        for (let i = 0; i < BUDGET; i++) await claimAttempt(i % 2 ? other : svc.database, `two-${i}`, { clientId: info.id }, t, BUDGET);
        await assert.rejects(claimAttempt(other, 'two-last', { clientId: info.id }, t, BUDGET), /Please wait 3600 seconds/);
        await assert.rejects(claimAttempt(svc.database, 'two-last', { clientId: info.id }, t, BUDGET), /Please wait 3600 seconds/);
        const before = await rows(svc);
        assert.equal(await sweepLoginThrottle(svc.database, new Date(t.getTime() + 2 * 3_600_000)), before);
        assert.equal(await rows(svc), 0);
      } finally {
        await other.close();
      }
    });
  });
}
