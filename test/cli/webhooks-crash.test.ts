// Webhooks never lose an event: a `serve` killed with SIGKILL while writes
// run and deliveries wait is restarted, and every change that committed has its
// event delivered (at least once), none of a change that rolled back; and two
// `serve` processes on one PostgreSQL deliver each event once.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Receiver } from '../support/receiver.ts';
import { prepareServe, type Served, startServe } from '../support/factories.ts';
import { openStageDatabase, type Stage, withStage } from '../support/stage.ts';

interface Setup extends Served { receiver: Receiver }

async function setUp(stage: Stage): Promise<Setup> {
  const receiver = await Receiver.start();
  writeFileSync(join(stage.dir, 'receiver.pem'), receiver.certPem);
  const served = await prepareServe(stage, 'crash', {
    NODE_EXTRA_CA_CERTS: join(stage.dir, 'receiver.pem'), WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT: '1s',
  });
  return { ...served, receiver };
}

const started = startServe;

const committedIds = async (stage: Stage): Promise<number[]> => {
  const database = openStageDatabase(stage);
  try {
    return (await database.db.selectFrom('departments' as never).select('id' as never).execute() as { id: number | string }[]).map((r) => Number(r.id));
  } finally {
    await database.close();
  }
};

for (const kind of DB_KINDS) {
  describe(`webhooks across a crash (${kind})`, () => {
    it('SIGKILL under writes with deliveries waiting: after a restart every committed change is delivered, no rolled-back one', async () => {
      await withStage(kind, async (stage) => {
        const s = await setUp(stage);
        let server = await started(stage, s);
        const api = new TestClient(server.port, s.serverPem, s.cert);
        try {
          assert.equal((await api.put('/3.0/webhooks', { url: s.receiver.url(), events: ['departments.created'] })).status, 201);
          // The receiver fails at first: some deliveries wait for their retry when the process dies.
          s.receiver.answer('/hook', ...Array.from({ length: 5 }, () => ({ status: 503 })));
          let writing = true;
          let n = 0;
          const writer = (async () => {
            while (writing) {
              const i = n++;
              await api.put('/3.0/departments', i % 5 === 4 ? [{ description: `rolled back ${i}` }, { description: 7 }] : { description: `d${i}` })
                .catch(() => null);
            }
          })();
          await new Promise((r) => setTimeout(r, 1500));
          server.signal('SIGKILL');
          await server.exitStatus;
          writing = false;
          await writer;
          api.close();
          server = await started(stage, s);
          const ids = await committedIds(stage);
          assert.ok(ids.length >= 10, `${ids.length} departments committed before the kill`);
          const heard = () => new Set(s.receiver.of('departments.created').filter((d) => d.headers['x-signature']).map((d) => d.json.data.id));
          await s.receiver.until(() => ids.every((id) => heard().has(id)), 30_000);
          assert.ok(!s.receiver.deliveries.some((d) => { const text = d.json.data.description; return typeof text === 'string' && text.startsWith('rolled back'); }));
          assert.ok(s.receiver.deliveries.every((d) => ids.includes(d.json.data.id as number)));
        } finally {
          api.close();
          await server.dispose();
          await s.receiver.close();
        }
      });
    });

    if (kind === 'postgres') {
      it('two serve processes on one PostgreSQL deliver each event once', async () => {
        await withStage(kind, async (stage) => {
          const s = await setUp(stage);
          const servers = await Promise.all([started(stage, s), started(stage, s)]);
          const apis = servers.map((server) => new TestClient(server.port, s.serverPem, s.cert));
          try {
            assert.equal((await apis[0]!.put('/3.0/webhooks', { url: s.receiver.url(), events: ['departments.created'] })).status, 201);
            await Promise.all(apis.map(async (api, k) => {
              for (let i = 0; i < 40; i++) assert.equal((await api.put('/3.0/departments', { description: `i${k}-${i}` })).status, 201);
            }));
            await s.receiver.until((ds) => ds.length >= 80, 20_000);
            await new Promise((r) => setTimeout(r, 1500));
            const ids = s.receiver.deliveries.map((d) => d.json.id);
            assert.equal(ids.length, 80, 'one delivery per event');
            assert.equal(new Set(ids).size, 80);
          } finally {
            for (const api of apis) api.close();
            await Promise.all(servers.map((server) => server.dispose()));
            await s.receiver.close();
          }
        });
      });
    }
  });
}
