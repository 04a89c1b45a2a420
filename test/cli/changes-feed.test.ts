// The change feed under real processes: a reader following
// `changes/seq>N` while writers run sees every committed change exactly once, in
// commit order — with two `serve` instances writing to one PostgreSQL, and across
// a SIGKILL of the instance that writes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { buildCompany, prepareServe, startServe } from '../support/factories.ts';
import { openStageDatabase, show, type Stage, withStage } from '../support/stage.ts';
import type { Inserted } from '../support/api.ts';

interface Change { seq: number; endpoint: string; record_id: number; op: string }

const setUp = (stage: Stage) => prepareServe(stage, 'feed');
const started = startServe;

/**
 * Reads `changes/seq>N` page after page into `log` until `more()` is false and a read finds
 * nothing new. A read that fails (the server killed, restarting, or busy) is tried again: only
 * an answered empty page means the reader has caught up.
 */
async function follow(api: () => TestClient, log: Change[], more: () => boolean): Promise<void> {
  for (let failedAfterEnd = 0; ;) {
    const r = await api().get(`/3.0/changes/seq>${log.at(-1)?.seq ?? 0}`).catch(() => null);
    if (r?.status !== 200) {
      if (!more() && ++failedAfterEnd > 500) throw new Error(`the feed stopped answering: ${r?.status ?? 'no answer'}`);
      await new Promise((done) => setTimeout(done, 20));
      continue;
    }
    const page = r.reply<Change[]>();
    log.push(...page.map(({ seq, endpoint, record_id, op }) => ({ seq, endpoint, record_id, op })));
    if (page.length === 0) {
      if (!more()) return;
      await new Promise((done) => setTimeout(done, 20));
    }
  }
}

/** Creates, updates and deletes departments until `stop()`; a fifth of the PUTs carry a bad record and roll back. */
async function write(api: TestClient, tag: string, stop: () => boolean): Promise<void> {
  for (let i = 0; !stop(); i++) {
    const r = await api.put('/3.0/departments', i % 5 === 4 ? [{ description: `rolled back ${tag}` }, { description: 7 }] : { description: `${tag}${i}` })
      .catch(() => null);
    const id = r?.status === 201 ? r.reply<Inserted>().ids[0] : null;
    if (id === null) continue;
    if (i % 3 === 0) await api.post(`/3.0/departments/id=${id}`, { description: `${tag}${i} again` }).catch(() => null);
    if (i % 7 === 0) await api.delete(`/3.0/departments/id=${id}`).catch(() => null);
  }
}

/** Every change to departments the audit log records, as (record, op) in the audit's order. */
async function audited(stage: Stage): Promise<string[]> {
  const database = openStageDatabase(stage);
  try {
    const rows = await database.db.selectFrom('auditlog' as never).select(['record_id', 'action'] as never[])
      .where('endpoint' as never, '=', 'departments' as never).orderBy('id' as never).execute();
    return (rows as { record_id: number | string; action: string }[]).map((r) => `${Number(r.record_id)} ${r.action}d`);
  } finally {
    await database.close();
  }
}

/** The log holds each seq once, ascending, and each record's changes in the order the audit log has them. */
function sameAsAudit(log: readonly Change[], audit: readonly string[]): void {
  assert.ok(log.every((c, i) => i === 0 || c.seq > log[i - 1]!.seq), 'seq strictly ascending, nothing repeated');
  const mine = log.filter((c) => c.endpoint === 'departments').map((c) => `${c.record_id} ${c.op}`);
  const byRecord = (list: readonly string[]) => {
    const m = new Map<string, string[]>();
    for (const e of list) { const [id, op] = e.split(' '); m.set(id!, [...(m.get(id!) ?? []), op!]); }
    return m;
  };
  assert.equal(mine.length, audit.length, 'as many changes as audited changes');
  assert.deepEqual(byRecord(mine), byRecord(audit));
}

for (const kind of DB_KINDS) {
  describe(`change feed across processes (${kind})`, () => {
    it('a reader following seq>N while a writer is killed with SIGKILL and restarted sees every committed change once, in order', async () => {
      await withStage(kind, async (stage) => {
        const s = await setUp(stage);
        let server = await started(stage, s);
        let api = new TestClient(server.port, s.serverPem, s.cert);
        const log: Change[] = [];
        let writing = true;
        const reader = follow(() => api, log, () => writing);
        try {
          let killed = false;
          const writer = write(api, 'w', () => killed);
          await new Promise((r) => setTimeout(r, 1500));
          server.signal('SIGKILL');
          await server.exitStatus;
          killed = true;
          await writer;
          const before = log.length;
          api.close();
          server = await started(stage, s);
          api = new TestClient(server.port, s.serverPem, s.cert);
          let done = false;
          const again = write(api, 'x', () => done);
          await new Promise((r) => setTimeout(r, 1000));
          done = true;
          await again;
          writing = false;
          await reader;
          assert.ok(before > 5 && log.length > before, `${before} changes read before the kill, ${log.length} in all`);
          sameAsAudit(log, await audited(stage));
        } finally {
          writing = false;
          await reader;
          api.close();
          await server.dispose();
        }
      });
    });

    it('asset-tracker changes prune deletes what is older than --days and tells the highest seq it pruned', async () => {
      await withStage(kind, async (stage) => {
        await setUp(stage);
        const database = openStageDatabase(stage);
        try {
          await buildCompany(database, 'Old');
          await buildCompany(database, 'New');
          const { rows } = await sql<{ seq: number }>`SELECT seq FROM events ORDER BY seq`.execute(database.db);
          const seqs = rows.map((r) => Number(r.seq));
          await sql`UPDATE events SET created = '2000-01-01 00:00:00' WHERE seq < ${seqs.at(-1)}`.execute(database.db);
        } finally {
          await database.close();
        }
        const run = await stage.cli('changes', 'prune', '--days', '1', '--json');
        assert.equal(run.code, 0, show(run));
        const out = JSON.parse(run.stdout) as { days: number; deleted: number; through: number };
        assert.equal(out.days, 1);
        assert.ok(out.deleted >= 2, run.stdout);
        const again = await stage.cli('changes', 'prune', '--json');
        assert.deepEqual(JSON.parse(again.stdout), { days: 30, deleted: 0, through: out.through });
      });
    });

    if (kind === 'postgres') {
      it('two serve processes writing to one PostgreSQL: a reader sees every committed change once, in commit order', async () => {
        await withStage(kind, async (stage) => {
          const s = await setUp(stage);
          const servers = await Promise.all([started(stage, s), started(stage, s)]);
          const apis = servers.flatMap((server) => [0, 1].map(() => new TestClient(server.port, s.serverPem, s.cert)));
          const readerApi = new TestClient(servers[0].port, s.serverPem, s.cert);
          const log: Change[] = [];
          let writing = true;
          try {
            const reader = follow(() => readerApi, log, () => writing);
            let done = false;
            const writers = apis.map((api, k) => write(api, `w${k}-`, () => done));
            await new Promise((r) => setTimeout(r, 3000));
            done = true;
            await Promise.all(writers);
            writing = false;
            await reader;
            assert.ok(log.length > 50, `${log.length} changes read`);
            sameAsAudit(log, await audited(stage));
            // A reader starting afresh now reads exactly what the live reader read.
            const fresh: Change[] = [];
            await follow(() => readerApi, fresh, () => false);
            assert.deepEqual(fresh, log);
          } finally {
            writing = false;
            for (const api of [...apis, readerApi]) api.close();
            await Promise.all(servers.map((server) => server.dispose()));
          }
        });
      });
    }
  });
}
