// The bare servers' transport, as the service's: https, requestCert, any client
// certificate accepted, TLS 1.2+, Node's default keep-alive, no logger; and who the
// client is, by its certificate's fingerprint. Env: PORT, TLS_CERT_FILE, TLS_KEY_FILE.
import Fastify, { type FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';

import { tlsProfile } from '../src/tls/profile.ts';

export function bareFastify(): FastifyInstance<https.Server> {
  const key = readFileSync(process.env.TLS_KEY_FILE!);
  const cert = readFileSync(process.env.TLS_CERT_FILE!);
  const fastify = Fastify({
    logger: false,
    serverFactory: (handler) => https.createServer({ ...tlsProfile(), key, cert }, handler),
  });
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  return fastify;
}

/** Listens on 127.0.0.1:PORT; closes on SIGINT/SIGTERM (then `onClose`). */
export async function serve(fastify: FastifyInstance<https.Server>, onClose: () => Promise<void> = async () => {}): Promise<void> {
  await fastify.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void fastify.close().then(onClose).then(() => process.exit(0)));
  }
}

const fingerprints = new WeakMap<TLSSocket, string | null>();
/** SHA-256 of the peer certificate's DER SubjectPublicKeyInfo, lower-case hex, worked out once per connection; null without a certificate. */
export function fingerprintOf(socket: TLSSocket): string | null {
  let known = fingerprints.get(socket);
  if (known === undefined) {
    const cert = socket.getPeerX509Certificate();
    known = cert ? createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('hex') : null;
    fingerprints.set(socket, known);
  }
  return known;
}

/** The service's BASE_URL: the setting, or without one https://localhost:PORT (src/config.ts). */
export const baseUrl = (): string => (process.env.BASE_URL || `https://localhost:${process.env.PORT}`).replace(/\/+$/, '');

export const JSON_TYPE = 'application/json; charset=utf-8';
/** The answer to a client without a certificate the store knows. */
export const NO_ACCESS = '{"response":{"error":"no access","code":"no_access"}}';
