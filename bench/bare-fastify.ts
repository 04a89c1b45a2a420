// The bare servers' transport, as the service's: https, requestCert, any client
// certificate accepted, TLS 1.2+, Node's default keep-alive, no logger.
// Env: PORT, TLS_CERT_FILE, TLS_KEY_FILE.
import Fastify, { type FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import https from 'node:https';

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
