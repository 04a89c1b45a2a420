// Draining on SIGTERM: /readyz turns 503 at once, on the API's port and on the
// metrics listener, while /healthz stays ok; for SHUTDOWN_DRAIN_MS the listener
// still accepts and serves, each answer with `Connection: close`; then new
// connections are refused and the process exits 0.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import tls from 'node:tls';
import { describe, it } from 'node:test';
import { probe } from '../support/balancer.ts';
import { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { prepareServe } from '../support/factories.ts';
import { freePort, Server, withStage } from '../support/stage.ts';

const DRAIN_MS = 3000;

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

for (const kind of DB_KINDS) {
  describe(`draining on SIGTERM (${kind})`, () => {
    it('readiness fails at once, requests are still served with Connection: close, then the listener closes', async () => {
      await withStage(kind, async (stage) => {
        const metrics = await freePort();
        const s = await prepareServe(stage, 'drain', { SHUTDOWN_DRAIN_MS: String(DRAIN_MS), METRICS_PORT: String(metrics) });
        const server = await Server.start(stage, 'serve', s.env);
        try {
          await server.waitUntilReady(join(stage.dir, 'server.pem'));
          const anonymous = new TestClient(server.port, s.serverPem);
          const api = new TestClient(server.port, s.serverPem, s.cert);
          const ready = await anonymous.get('/readyz');
          assert.deepEqual([ready.status, ready.body, ready.headers.connection], [200, { status: 'ok' }, 'keep-alive']);
          assert.deepEqual(await probe(metrics, '/readyz'), { status: 200, body: { status: 'ok' } });
          assert.equal((await api.get('/3.0/endpoints')).headers.connection, 'keep-alive');

          const signalled = Date.now();
          server.signal('SIGTERM');
          await new Promise((r) => setTimeout(r, 300));
          const draining = await anonymous.get('/readyz');
          assert.deepEqual([draining.status, draining.body], [503, { status: 'unavailable', reason: 'shutting down' }]);
          assert.equal(draining.headers.connection, 'close');
          assert.deepEqual(await probe(metrics, '/readyz'), { status: 503, body: { status: 'unavailable', reason: 'shutting down' } });
          assert.deepEqual(await probe(metrics, '/healthz'), { status: 200, body: { status: 'ok' } });
          const alive = await anonymous.get('/healthz');
          assert.deepEqual([alive.status, alive.body], [200, { status: 'ok' }]);

          // Still accepting and serving, each answer closing its connection.
          assert.equal(await connects(server.port), true);
          const served = await api.put('/3.0/assets', { asset_no: 'D-1' });
          assert.deepEqual([served.status, served.headers.connection], [201, 'close']);
          const read = await api.get('/3.0/assets');
          assert.deepEqual([read.status, read.headers.connection], [200, 'close']);
          assert.ok(Date.now() - signalled < DRAIN_MS, 'all of that within the drain');

          await new Promise((r) => setTimeout(r, DRAIN_MS - (Date.now() - signalled) + 500));
          assert.equal(await connects(server.port), false, 'a new connection after the drain');
          assert.deepEqual(await server.exitStatus, { code: 0, signal: null }, server.stderr);
          anonymous.close();
          api.close();
        } finally {
          await server.dispose();
        }
      });
    });
  });
}
