// The probes without a client certificate: /healthz while the process answers (also
// while it drains), /readyz only when the database answers, every migration is applied
// and no shutdown has begun — otherwise 503 with the reason.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { DB_KINDS, startService } from '../support/harness.ts';

for (const kind of DB_KINDS) {
  describe(`probes (${kind})`, () => {
    it('readiness names a missing migration and a shutdown; liveness stays ok; draining answers close their connections', async () => {
      const s = await startService(kind);
      try {
        const anonymous = s.client(null);
        const ready = await anonymous.get('/readyz');
        assert.deepEqual([ready.status, ready.body, ready.headers.connection], [200, { status: 'ok' }, 'keep-alive']);

        const { rows: [last] } = await sql<{ name: string; timestamp: string }>`SELECT name, timestamp FROM kysely_migration
          ORDER BY name DESC LIMIT 1`.execute(s.database.db);
        await sql`DELETE FROM kysely_migration WHERE name = ${last!.name}`.execute(s.database.db);
        const missing = await anonymous.get('/readyz');
        assert.deepEqual([missing.status, missing.body], [503, { status: 'unavailable', reason: `migrations not applied: ${last!.name}` }]);
        await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${last!.name}, ${last!.timestamp})`.execute(s.database.db);
        assert.equal((await anonymous.get('/readyz')).status, 200);

        s.app.drain();
        const draining = await anonymous.get('/readyz');
        assert.deepEqual([draining.status, draining.body, draining.headers.connection],
          [503, { status: 'unavailable', reason: 'shutting down' }, 'close']);
        const live = await anonymous.get('/healthz');
        assert.deepEqual([live.status, live.body, live.headers.connection], [200, { status: 'ok' }, 'close']);
        const { cert } = await s.certificate(await s.company('Draining'));
        const api = s.client(cert);
        const served = await api.get('/3.0/endpoints');
        assert.deepEqual([served.status, served.headers.connection], [200, 'close']);
      } finally {
        await s.close();
      }
    });
  });
}
