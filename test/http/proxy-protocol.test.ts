// The PROXY protocol on the API's listener (and the portal's): connections from PROXY_PROTOCOL_FROM
// begin with a header whose source address is the client's (audit entries, the
// per-address connection limit); without one they are refused, and a connection
// from elsewhere that sends one is refused. Without the setting no header is read.
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import ipaddr from 'ipaddr.js';
import type { TestCert } from '../support/certs.ts';
import { readResponse, type TestResponse } from '../support/client.ts';
import { DB_KINDS, SERVER_CERT, type Service, startService } from '../support/harness.ts';

const BALANCER = '127.0.0.1';
const ELSEWHERE = '127.0.0.3';

const v1 = (source: string, port = 40001) => Buffer.from(`PROXY ${source.includes(':') ? 'TCP6' : 'TCP4'} ${source} ${source.includes(':') ? '::1' : '127.0.0.1'} ${port} 8443\r\n`);
function v2(source: string | null, port = 40002): Buffer {
  const head = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, source ? 0x21 : 0x20, 0x00, 0, 0]);
  if (!source) return head;
  const ip = ipaddr.parse(source);
  const v6 = ip.kind() === 'ipv6';
  const block = Buffer.from([...ip.toByteArray(), ...(v6 ? new Array<number>(15).fill(0) : [127, 0, 0]), 1, port >> 8, port & 0xff, 0x20, 0xfb]);
  head[13] = v6 ? 0x21 : 0x11;
  head.writeUInt16BE(block.length, 14);
  return Buffer.concat([head, block]);
}

/** A TCP connection from `from`, `preamble` sent first, then TLS and one request over it; the response, or the error that ended it. */
async function send(s: Service | number, from: string, preamble: Buffer | null, cert: TestCert | null, method = 'GET', path = '/3.0/endpoints',
  body?: unknown): Promise<TestResponse | Error> {
  const raw = net.connect({ host: '127.0.0.1', port: typeof s === 'number' ? s : s.port, localAddress: from });
  await new Promise<void>((resolve, reject) => raw.once('connect', resolve).once('error', reject));
  if (preamble) raw.write(preamble);
  const secure = tls.connect({ socket: raw, ca: SERVER_CERT.certPem, servername: 'localhost', ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) });
  return new Promise((resolve) => {
    const req = https.request({ method, path, createConnection: () => secure, headers: { connection: 'close' } },
      (res) => void readResponse(res).then(resolve, resolve));
    req.once('error', resolve);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function ok(r: TestResponse | Error, status = 200): TestResponse {
  assert.ok(!(r instanceof Error), `expected ${status}, got ${r instanceof Error ? r.message : ''}`);
  assert.equal(r.status, status, r.text);
  return r;
}

async function auditAddress(s: Service, assetNo: string): Promise<string | null> {
  const { rows } = await sql<{ ip: string | null }>`SELECT a.ip FROM auditlog a JOIN assets r ON r.id = a.record_id
    WHERE a.endpoint = 'assets' AND r.asset_no = ${assetNo}`.execute(s.database.db);
  assert.equal(rows.length, 1);
  return rows[0]!.ip;
}

for (const kind of DB_KINDS) {
  describe(`PROXY protocol (${kind})`, () => {
    it('takes the client\'s address from a v1 or v2 header of a listed balancer; LOCAL keeps the balancer\'s', async () => {
      const s = await startService(kind, { proxyProtocolFrom: [BALANCER] });
      try {
        const { cert } = await s.certificate(await s.company('Proxied'));
        ok(await send(s, BALANCER, v1('203.0.113.7'), cert, 'PUT', '/3.0/assets', { asset_no: 'P-v1' }), 201);
        ok(await send(s, BALANCER, v2('2001:db8::7'), cert, 'PUT', '/3.0/assets', { asset_no: 'P-v2' }), 201);
        ok(await send(s, BALANCER, v2('198.51.100.4'), cert, 'PUT', '/3.0/assets', { asset_no: 'P-v2-4' }), 201);
        ok(await send(s, BALANCER, v2(null), cert, 'PUT', '/3.0/assets', { asset_no: 'P-local' }), 201);
        assert.deepEqual([await auditAddress(s, 'P-v1'), await auditAddress(s, 'P-v2'), await auditAddress(s, 'P-v2-4'), await auditAddress(s, 'P-local')],
          ['203.0.113.7', '2001:db8::7', '198.51.100.4', BALANCER]);
        // The balancer's health check: LOCAL, no certificate.
        assert.deepEqual(ok(await send(s, BALANCER, v2(null), null, 'GET', '/readyz')).body, { status: 'ok' });
      } finally {
        await s.close();
      }
    });

    it('refuses a listed balancer\'s connection without a valid header, and a header from anywhere else', async () => {
      const s = await startService(kind, { proxyProtocolFrom: [BALANCER], connections: { handshakeTimeoutMs: 500 } });
      try {
        const { cert } = await s.certificate(await s.company('Refused'));
        for (const preamble of [null, Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n'), Buffer.from(`PROXY UNKNOWN ${'x'.repeat(120)}\r\n`)]) {
          assert.ok(await send(s, BALANCER, preamble, cert) instanceof Error, `from the balancer with ${preamble ? JSON.stringify(preamble.toString()) : 'no header'}`);
        }
        // A truncated header, then nothing: closed once the handshake's time is up.
        const started = Date.now();
        const truncated = net.connect({ host: '127.0.0.1', port: s.port, localAddress: BALANCER }, () => truncated.write(v2('192.0.2.1').subarray(0, 20)));
        truncated.on('error', () => {});
        await new Promise((r) => truncated.once('close', r));
        assert.ok(Date.now() - started >= 400, 'closed when the time was up, not before');
        // From an address not listed: no header is read, and one sent is refused.
        assert.ok(await send(s, ELSEWHERE, v1('203.0.113.8'), cert) instanceof Error);
        assert.ok(await send(s, ELSEWHERE, v2('203.0.113.8'), cert) instanceof Error);
        ok(await send(s, ELSEWHERE, null, cert, 'PUT', '/3.0/assets', { asset_no: 'P-direct' }), 201);
        assert.equal(await auditAddress(s, 'P-direct'), ELSEWHERE);
      } finally {
        await s.close();
      }
    });

    it('caps connections per client address as the header gives it, not per balancer', async () => {
      const s = await startService(kind, { proxyProtocolFrom: [BALANCER], connections: { maxPerAddress: 2 } });
      const held: net.Socket[] = [];
      try {
        const { cert } = await s.certificate(await s.company('Capped'));
        for (let i = 0; i < 2; i++) {
          const raw = net.connect({ host: '127.0.0.1', port: s.port, localAddress: BALANCER });
          await new Promise<void>((resolve) => raw.once('connect', resolve));
          raw.write(v1('203.0.113.20', 41000 + i));
          held.push(raw);
        }
        await new Promise((r) => setTimeout(r, 200));
        assert.ok(await send(s, BALANCER, v1('203.0.113.20', 41010), cert) instanceof Error, 'a third connection of one client');
        ok(await send(s, BALANCER, v1('203.0.113.21'), cert));
      } finally {
        for (const h of held) h.destroy();
        await s.close();
      }
    });

    it('applies to the portal\'s listener too: its visitors\' addresses come from the header', async () => {
      const s = await startService(kind, { proxyProtocolFrom: [BALANCER], portal: true });
      try {
        const portal = s.app.portal!.https;
        await new Promise<void>((r) => portal.listen(0, '127.0.0.1', () => r()));
        const port = (portal.address() as net.AddressInfo).port;
        assert.ok(await send(port, BALANCER, null, null, 'GET', '/login') instanceof Error, 'from the balancer without a header');
        assert.ok(await send(port, ELSEWHERE, v1('203.0.113.30'), null, 'GET', '/login') instanceof Error, 'a header from elsewhere');
        ok(await send(port, BALANCER, v2('203.0.113.30'), null, 'GET', '/login'));
        ok(await send(port, ELSEWHERE, null, null, 'GET', '/login'));
      } finally {
        await s.close();
      }
    });
  });
}

describe('PROXY protocol not configured', () => {
  it('reads no header: one sent is the start of a broken TLS handshake', async () => {
    const s = await startService(DB_KINDS[0]!);
    try {
      const { cert } = await s.certificate(await s.company('Plain'));
      assert.ok(await send(s, BALANCER, v1('203.0.113.7'), cert) instanceof Error);
      ok(await send(s, BALANCER, null, cert));
    } finally {
      await s.close();
    }
  });
});
