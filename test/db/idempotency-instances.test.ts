// An Idempotency-Key claim carries its instance's heartbeat: while that instance
// beats, a retry elsewhere waits and gets 409; once it stops beating (it died), the
// retry takes the claim over at once instead of after the claim's five-minute lease,
// and the first request, should it still be alive after all, can no longer keep its
// reply — so its write rolls back and nothing is written twice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { beat, INSTANCE_STALE_MS, retire } from '../../src/db/instances.ts';
import { beginKeyed, type Claim, type KeyedRequest } from '../../src/http/idempotency.ts';
import type { Principal } from '../../src/model/principal.ts';
import { DB_KINDS, freshDatabase } from '../support/harness.ts';

const principal = { clientId: 7, clientCompanyId: 1, impersonation: false, companyId: 1, session: null, level: 'basic', canCreateCompanies: false } as
  unknown as Principal;
const request = (key: string): KeyedRequest => ({ key, principal, verb: 'PUT', path: '/3.0/assets', bodyKind: 'json', body: Buffer.from('{}'), now: new Date() });

async function claimed(p: ReturnType<typeof beginKeyed>): Promise<Claim> {
  const begun = await p;
  assert.equal(begun.kind, 'claimed');
  return (begun as { claim: Claim }).claim;
}

for (const kind of DB_KINDS) {
  describe(`Idempotency-Key claims and the instances' heartbeat (${kind})`, () => {
    it('a live instance\'s claim holds; a dead one\'s is taken over at once, and the dead one can no longer keep its reply', async () => {
      const fresh = await freshDatabase(kind);
      const { database } = fresh;
      try {
        await beat(database, 'instance-a', Date.now());
        await beat(database, 'instance-b', Date.now());
        const first = await claimed(beginKeyed(database, request('k-1'), 0, 'instance-a'));
        await assert.rejects(beginKeyed(database, request('k-1'), 0, 'instance-b'), /A request with Idempotency-Key k-1 is still running/);

        // instance-a's last beat is older than the limit: taken for dead.
        await beat(database, 'instance-a', Date.now() - INSTANCE_STALE_MS - 1000);
        const retry = await claimed(beginKeyed(database, request('k-1'), 0, 'instance-b'));
        const { rows: [row] } = await sql<{ instance: string }>`SELECT instance FROM idempotency_keys WHERE ${sql.ref('key')} = 'k-1'`.execute(database.db);
        assert.equal(row?.instance, 'instance-b');

        // The first request's write, had its process lived on, cannot commit: its seal refuses.
        await assert.rejects(database.transaction((db) => first.sealer(0)(db, { status: 201, response: '{}' })), /still running/);
        await database.transaction((db) => retry.sealer(0)(db, { status: 201, response: '{"n":1}' }));
        const again = await beginKeyed(database, request('k-1'), 0, 'instance-a');
        assert.deepEqual(again.kind === 'replay' ? again.reply.response : null, '{"n":1}');
      } finally {
        await fresh.drop();
      }
    });

    it('a claim whose instance left the table (it stopped, or was forgotten) is free; one of no instance waits for its lease', async () => {
      const fresh = await freshDatabase(kind);
      const { database } = fresh;
      try {
        await beat(database, 'instance-c', Date.now());
        await claimed(beginKeyed(database, request('k-2'), 0, 'instance-c'));
        await retire(database, 'instance-c');
        await claimed(beginKeyed(database, request('k-2'), 0, 'instance-d'));

        await claimed(beginKeyed(database, request('k-3'), 0, null));
        await assert.rejects(beginKeyed(database, request('k-3'), 0, 'instance-d'), /still running/);
      } finally {
        await fresh.drop();
      }
    });
  });
}
