// The TLS profile: TLS 1.2 and 1.3 only; in TLS 1.2 only ECDHE key
// exchange with AEAD ciphers, in the server's order; TLS_CIPHERS replaces the list.
// Probed with `openssl s_client`, suite family by suite family, against a server
// with an RSA key (so that plain-RSA key exchange would be possible if allowed)
// and one with an ECDSA key.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createSelfSigned } from '../../src/tls/x509.ts';
import { type Service, startService } from '../support/harness.ts';

interface Handshake { readonly ok: boolean; readonly protocol: string | null; readonly cipher: string | null }

/** One handshake by `openssl s_client` (run alongside: the server is in this process). */
function handshake(port: number, args: readonly string[]): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', '-brief', ...args]);
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', reject);
    child.once('close', () => {
      clearTimeout(timer);
      resolve({
        ok: /CONNECTION ESTABLISHED/.test(out),
        protocol: /Protocol version: (\S+)/.exec(out)?.[1] ?? null,
        cipher: /Ciphersuite: (\S+)/.exec(out)?.[1] ?? null,
      });
    });
    child.stdin.end();
  });
}

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

for (const key of ['RSA', 'ECDSA'] as const) {
  describe(`TLS profile, ${key} server key`, () => {
    let svc: Service;
    let custom: Service;
    /** A control with every TLS 1.2 suite allowed: the probes below do connect where the profile lets them. */
    let permissive: Service;
    before(async () => {
      const cert = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'], ...(key === 'RSA' ? { keyPem: rsa() } : {}) });
      const tls = { key: cert.keyPem, cert: cert.certPem };
      svc = await startService('sqlite', { tls });
      custom = await startService('sqlite', { tls, tlsCiphers: `ECDHE-${key}-AES256-GCM-SHA384` });
      permissive = await startService('sqlite', { tls, tlsCiphers: 'ALL:@SECLEVEL=0' });
    });
    after(async () => { await svc.close(); await custom.close(); await permissive.close(); });

    const kx = key === 'RSA' ? 'RSA' : 'ECDSA';

    it('TLS 1.3 and TLS 1.2 with ECDHE and AES-GCM or ChaCha20-Poly1305 are accepted', async () => {
      assert.equal((await handshake(svc.port, ['-tls1_3'])).protocol, 'TLSv1.3');
      for (const cipher of [`ECDHE-${kx}-AES128-GCM-SHA256`, `ECDHE-${kx}-AES256-GCM-SHA384`, `ECDHE-${kx}-CHACHA20-POLY1305`]) {
        const h = await handshake(svc.port, ['-tls1_2', '-cipher', cipher]);
        assert.deepEqual([h.ok, h.protocol, h.cipher], [true, 'TLSv1.2', cipher]);
      }
    });

    it('TLS 1.0 and 1.1, key exchange without forward secrecy and CBC suites are refused', async () => {
      for (const version of ['-tls1_1', '-tls1']) assert.equal((await handshake(svc.port, [version, '-cipher', 'ALL:@SECLEVEL=0'])).ok, false);
      const refused = [`ECDHE-${kx}-AES128-SHA`, `ECDHE-${kx}-AES256-SHA384`,
        ...(key === 'RSA' ? ['AES128-GCM-SHA256', 'AES256-GCM-SHA384', 'AES128-SHA'] : [])];
      for (const cipher of refused) {
        const args = ['-tls1_2', '-cipher', `${cipher}:@SECLEVEL=0`];
        assert.equal((await handshake(permissive.port, args)).cipher, cipher, `the probe for ${cipher} works`);
        assert.equal((await handshake(svc.port, args)).ok, false, cipher);
      }
    });

    it("the server's order wins over the client's", async () => {
      const h = await handshake(svc.port, ['-tls1_2', '-cipher', `ECDHE-${kx}-CHACHA20-POLY1305:ECDHE-${kx}-AES128-GCM-SHA256`]);
      assert.equal(h.cipher, `ECDHE-${kx}-AES128-GCM-SHA256`);
    });

    it('TLS_CIPHERS replaces the list', async () => {
      assert.equal((await handshake(custom.port, ['-tls1_2', '-cipher', `ECDHE-${kx}-AES128-GCM-SHA256`])).ok, false);
      assert.equal((await handshake(custom.port, ['-tls1_2', '-cipher', `ECDHE-${kx}-AES256-GCM-SHA384`])).cipher, `ECDHE-${kx}-AES256-GCM-SHA384`);
    });
  });
}
