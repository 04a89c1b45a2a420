// The baseline: a bare Fastify route returning a static ~1 KB JSON over the same
// transport as the service (https, requestCert, any client certificate accepted,
// TLS 1.2+, Node's default keep-alive). Env: PORT, TLS_CERT_FILE, TLS_KEY_FILE.
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { STATIC_BODY } from './payload.ts';

const TLS_OPTIONS = { requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' } as const;
const key = readFileSync(process.env.TLS_KEY_FILE!);
const cert = readFileSync(process.env.TLS_CERT_FILE!);

const fastify = Fastify({
  logger: false,
  serverFactory: (handler) => https.createServer({ ...TLS_OPTIONS, key, cert }, handler),
});
fastify.get('/healthz', async () => ({ status: 'ok' }));
fastify.get('/static', async (_req, reply) => reply.type('application/json; charset=utf-8').send(STATIC_BODY));

await fastify.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void fastify.close().then(() => process.exit(0)));
