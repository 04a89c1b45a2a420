// Idempotency keys outlive the process: a `serve` killed with SIGKILL
// after answering a keyed PUT is started again, and the same request with the same
// key gets the first answer back, byte for byte, and creates nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { prepareServe, startServe } from '../support/factories.ts';
import { withStage } from '../support/stage.ts';

for (const kind of DB_KINDS) {
  describe(`Idempotency-Key across a restart (${kind})`, () => {
    it('a key answered before a SIGKILL replays after the restart, and nothing is created twice', async () => {
      await withStage(kind, async (stage) => {
        const s = await prepareServe(stage, 'restart');
        const { cert } = s;
        const headers = { 'idempotency-key': 'erp-order-1042' };
        const body = [{ asset_no: 'R-1' }, { asset_no: 'R-2' }];

        let server = await startServe(stage, s);
        let api = new TestClient(server.port, s.serverPem, cert);
        const first = await api.put('/3.0/assets', body, { headers });
        assert.equal(first.status, 201, first.text);
        api.close();
        server.signal('SIGKILL');
        await server.exitStatus;

        server = await startServe(stage, s);
        try {
          api = new TestClient(server.port, s.serverPem, cert);
          const again = await api.put('/3.0/assets', body, { headers });
          assert.deepEqual([again.status, again.text, again.headers['idempotent-replayed']], [201, first.text, 'true']);
          const listed = await api.get('/3.0/assets');
          assert.equal(listed.envelope.pagination!.total_records, 2);
          api.close();
        } finally {
          await server.stop();
        }
      });
    });
  });
}
