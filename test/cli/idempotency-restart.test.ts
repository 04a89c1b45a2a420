// Idempotency keys outlive the process (spec §14.1): a `serve` killed with SIGKILL
// after answering a keyed PUT is started again, and the same request with the same
// key gets the first answer back, byte for byte, and creates nothing.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { addClient, addCompany } from '../../src/admin.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createSelfSigned } from '../../src/tls/x509.ts';
import { selfSigned } from '../support/certs.ts';
import { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { openStageDatabase, Server, withStage } from '../support/stage.ts';

for (const kind of DB_KINDS) {
  describe(`Idempotency-Key across a restart (${kind})`, () => {
    it('a key answered before a SIGKILL replays after the restart, and nothing is created twice', async () => {
      await withStage(kind, async (stage) => {
        const tls = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'] });
        const certFile = join(stage.dir, 'server.pem');
        writeFileSync(certFile, tls.certPem);
        writeFileSync(join(stage.dir, 'server.key'), tls.keyPem);
        const cert = selfSigned('restart');
        const database = openStageDatabase(stage);
        await migrate(database.db);
        await addClient(database, { companyId: await addCompany(database, 'Top', null), certPem: cert.certPem });
        await database.close();
        const env = { TLS_CERT_FILE: certFile, TLS_KEY_FILE: join(stage.dir, 'server.key'), RATE_LIMIT: '0' };
        const headers = { 'idempotency-key': 'erp-order-1042' };
        const body = [{ asset_no: 'R-1' }, { asset_no: 'R-2' }];

        let server = await Server.start(stage, 'serve', env);
        await server.waitUntilReady(certFile);
        let api = new TestClient(server.port, tls.certPem, cert);
        const first = await api.put('/3.0/assets', body, { headers });
        assert.equal(first.status, 201, first.text);
        api.close();
        server.signal('SIGKILL');
        await server.exitStatus;

        server = await Server.start(stage, 'serve', env);
        try {
          await server.waitUntilReady(certFile);
          api = new TestClient(server.port, tls.certPem, cert);
          const again = await api.put('/3.0/assets', body, { headers });
          assert.deepEqual([again.status, again.text, again.headers['idempotent-replayed']], [201, first.text, 'true']);
          const listed = await api.get('/3.0/assets');
          assert.equal(listed.body.pagination.total_records, 2);
          api.close();
        } finally {
          await server.stop();
        }
      });
    });
  });
}
