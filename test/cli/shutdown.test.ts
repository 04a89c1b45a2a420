// Graceful shutdown: on SIGTERM a running `serve` stops accepting connections,
// lets the requests under way finish (within SHUTDOWN_GRACE_MS), stops its
// background jobs at a safe point, closes the database and exits 0.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import tls from 'node:tls';
import { buildCertificate, buildCompany, startServe, withStore } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { openStageDatabase, withStage } from '../support/stage.ts';
import { bytes, streamRequest } from '../support/workflows.ts';
import type { FileRecord, Inserted } from '../support/api.ts';

const PDF = Buffer.from('%PDF-1.4\n');

/** Whether a new TLS connection to the port is accepted at all. */
function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/** A body that arrives over `ms`, so that the request is still under way when the signal comes. */
async function* slowly(total: number, ms: number): AsyncGenerator<Buffer> {
  const parts = [...bytes(PDF, total, 16 * 1024)];
  for (const part of parts) {
    yield Buffer.from(part);
    await new Promise((r) => setTimeout(r, ms / parts.length));
  }
}

for (const kind of DB_KINDS) {
  describe(`graceful shutdown (${kind})`, () => {
    it('SIGTERM refuses new connections, finishes the upload under way, and exits 0', async () => {
      await withStage(kind, async (stage) => {
        const cert = await withStore(stage, async (database) => buildCertificate(database, await buildCompany(database, 'Shutdown'), 'shutdown'));
        const server = await startServe(stage, { env: { SHUTDOWN_GRACE_MS: '10000' } });
        try {
          const api = server.client(cert);
          const asset = (await api.put('/3.0/assets', { asset_no: 'S-1' })).reply<Inserted>().ids[0]!;
          const file = (await api.put('/3.0/files', { asset_id: asset })).reply<Inserted>().ids[0]!;
          const endpoint = (await api.get(`/3.0/files/id=${file}`)).reply<FileRecord[]>()[0]!.upload_endpoint;
          api.close();
          const upload = streamRequest(server.port, cert, 'POST', new URL(endpoint).pathname, {}, slowly(512 * 1024, 1500));
          await new Promise((r) => setTimeout(r, 300));
          server.signal('SIGTERM');
          await new Promise((r) => setTimeout(r, 200));
          assert.equal(await connects(server.port), false, 'a new connection after SIGTERM');
          const res = await upload;
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.envelope.response, { records_updated: 1, records_found: 1 });
          const exit = await server.exitStatus;
          assert.deepEqual(exit, { code: 0, signal: null }, server.stderr);
          const check = openStageDatabase(stage);
          try {
            const { rows } = await sql<{ size: number }>`SELECT size FROM files WHERE id = ${file}`.execute(check.db);
            assert.equal(Number(rows[0]?.size), 512 * 1024);
          } finally {
            await check.close();
          }
        } finally {
          await server.dispose();
        }
      });
    });
  });
}
