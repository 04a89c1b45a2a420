// Baseline (a): a bare Fastify route returning a static ~1 KB JSON over the same
// transport as the service.
import { bareFastify, serve } from './bare-fastify.ts';
import { STATIC_BODY } from './payload.ts';

const fastify = bareFastify();
fastify.get('/static', async (_req, reply) => reply.type('application/json; charset=utf-8').send(STATIC_BODY));
await serve(fastify);
