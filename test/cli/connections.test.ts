// Connection hygiene of a running `serve`: connections that never finish a TLS
// handshake — 1,000 that send nothing, 1,000 that stop inside their ClientHello —
// are closed once TLS_HANDSHAKE_TIMEOUT has passed, and the process's descriptors
// return to where they were, while a normal client is served throughout; a client
// address over MAX_CONNECTIONS_PER_ADDRESS, or the listener over MAX_CONNECTIONS,
// has its new connections closed at once; headers that stop coming are answered
// 408 once HEADERS_TIMEOUT has passed.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { describe, it } from 'node:test';
import type { TestCert } from '../support/certs.ts';
import type { TestClient } from '../support/client.ts';
import { buildCertificate, buildCompany, startServe, withStore } from '../support/factories.ts';
import { type Server, type Stage, withStage } from '../support/stage.ts';

const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
/** The first bytes of a TLS record carrying a ClientHello, and then nothing. */
const HELLO_START = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]);

async function start(stage: Stage, env: Record<string, string>): Promise<{ server: Server; client: TestClient; cert: TestCert }> {
  const cert = await withStore(stage, async (database) => buildCertificate(database, await buildCompany(database, 'Hygiene'), 'hygiene'));
  const server = await startServe(stage, { env });
  return { server, cert, client: server.client(cert) };
}

/** Opens `n` connections from `from`; each resolves with whether the server closed it within `ms`. */
function connections(port: number, n: number, from: string, first: Buffer | null): { opened: Promise<void>; closed: Promise<number>[] } {
  const sockets: net.Socket[] = [];
  const closed = Array.from({ length: n }, () => new Promise<number>((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from }, () => { if (first) socket.write(first); });
    const opened = Date.now();
    socket.on('error', () => {});
    socket.once('close', () => resolve(Date.now() - opened));
    sockets.push(socket);
  }));
  // A connection the kernel refused (its backlog full) counts as opened: its closing is what is timed.
  const opened = Promise.all(sockets.map((s) => new Promise<void>((r) => {
    if (!s.connecting) r();
    s.once('connect', () => r());
    s.once('close', () => r());
  }))).then(() => {});
  return { opened, closed };
}

const pid = (server: Server) => Number(/"pid":(\d+)/.exec(server.stdout)?.[1] ?? (server as unknown as { child: { pid: number } }).child.pid);

describe('connection hygiene of a running serve', () => {
  it('silent connections are closed after the handshake timeout; descriptors come back; a normal client is served throughout', async () => {
    await withStage('sqlite', async (stage) => {
      const { server, client } = await start(stage, { TLS_HANDSHAKE_TIMEOUT: '4s', MAX_CONNECTIONS_PER_ADDRESS: '5000' });
      let serving = true;
      try {
        assert.equal((await client.get('/3.0/endpoints')).status, 200);
        const serverPid = pid(server);
        const baseline = descriptors(serverPid);
        const statuses: number[] = [];
        const normal = (async () => {
          while (serving) {
            statuses.push(await client.get('/3.0/endpoints').then((r) => r.status, () => -1));
            await new Promise((r) => setTimeout(r, 50));
          }
        })();
        const silent = connections(server.port, 1000, '127.0.0.1', null);
        const hello = connections(server.port, 1000, '127.0.0.1', HELLO_START);
        await Promise.all([silent.opened, hello.opened]);
        const openedAt = Date.now();
        // The kernel completes a connection before the process accepts it (and past its backlog, the client
        // tries again a second later): wait until the process holds most of them, well before the timeout.
        let held = descriptors(serverPid);
        for (let i = 0; i < 120 && held < baseline + 1900; i++) {
          await new Promise((r) => setTimeout(r, 25));
          held = descriptors(serverPid);
        }
        assert.ok(held >= baseline + 1000, `the connections are open at first: ${held} descriptors, ${baseline} before`);
        const lives = await Promise.all([...silent.closed, ...hello.closed]);
        const lastClosed = Date.now() - openedAt;
        // Closed by the server, not held: on a loaded machine its timers run late, so the bound is loose.
        assert.ok(lastClosed <= 4000 + 10_000, `the last connection closed ${lastClosed} ms after all were open`);
        assert.ok(Math.min(...lives) >= 3500, 'none was closed before the timeout');
        await new Promise((r) => setTimeout(r, 200));
        assert.ok(descriptors(serverPid) <= baseline + 5, `${descriptors(serverPid)} descriptors open, ${baseline} before`);
        serving = false;
        await normal;
        assert.ok(statuses.length >= 20 && statuses.every((s) => s === 200), JSON.stringify(statuses));
      } finally {
        serving = false;
        client.close();
        await server.dispose();
      }
    });
  });

  it('a request whose headers stop coming is answered 408 in the error envelope once HEADERS_TIMEOUT has passed', async () => {
    await withStage('sqlite', async (stage) => {
      const { server, client } = await start(stage, { HEADERS_TIMEOUT: '2s' });
      try {
        const began = Date.now();
        const slow = await client.raw('GET /3.0/endpoints HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n');
        const waited = Date.now() - began;
        assert.equal(slow.status, 408);
        assert.deepEqual(slow.body, { response: { error: 'Request not received in time', code: 'request_timeout' } });
        assert.ok(waited >= 1900 && waited <= 2000 + 1500, `answered after ${waited} ms`);
        assert.equal((await client.get('/3.0/endpoints')).status, 200);
      } finally {
        client.close();
        await server.dispose();
      }
    });
  });

  it('an address over its cap, or the listener over its total, has new connections closed at once', async () => {
    await withStage('sqlite', async (stage) => {
      const { server, client } = await start(stage, { MAX_CONNECTIONS_PER_ADDRESS: '50', MAX_CONNECTIONS: '120', TLS_HANDSHAKE_TIMEOUT: '30s' });
      try {
        const fromTwo = connections(server.port, 60, '127.0.0.2', null);
        const quick = (closed: Promise<number>[]) => Promise.all(closed.map((c) => Promise.race([c, new Promise<number>((r) => setTimeout(() => r(-1), 1500))])));
        const two = await quick(fromTwo.closed);
        assert.equal(two.filter((t) => t >= 0).length, 10, 'the connections over 50 from one address');
        // Another address is not held back by the first one's cap.
        assert.equal((await client.get('/3.0/endpoints')).status, 200);
        const fromThree = connections(server.port, 50, '127.0.0.3', null);
        const fromFour = connections(server.port, 20, '127.0.0.4', null);
        const three = await quick(fromThree.closed);
        const four = await quick(fromFour.closed);
        // 50 + 1 (the normal client) + 50 + 20 would be 121 open: the total of 120 closes the last ones.
        assert.ok(three.filter((t) => t >= 0).length + four.filter((t) => t >= 0).length >= 1);
      } finally {
        client.close();
        await server.dispose();
      }
    });
  });
});
