// asset-tracker jobs list | jobs run NAME: the one table of background jobs
// (src/jobs/table.ts) as the operator sees it, and a run of any of them on demand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DB_KINDS } from '../support/harness.ts';
import { show, withStage } from '../support/stage.ts';

const NAMES = ['reminders', 'sessions', 'login-throttle', 'changes', 'idempotency-keys', 'webhooks', 'mail'];

describe('asset-tracker jobs', () => {
  it('lists every job with its interval (REMINDER_INTERVAL for all but the webhook dispatcher) and how instances share it', async () => {
    await withStage('sqlite', async (s) => {
      const r = await s.cli('jobs', 'list', '--json');
      assert.equal(r.code, 0, show(r));
      const jobs = JSON.parse(r.stdout) as { name: string; every_ms: number; shared: string }[];
      assert.deepEqual(jobs.map((j) => j.name), NAMES);
      assert.deepEqual(jobs.map((j) => j.every_ms), [3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000, 250, 2000]);
      assert.ok(jobs.every((j) => j.shared.length > 0));
      const human = await s.cli('jobs', 'list');
      for (const name of NAMES) assert.match(human.stdout, new RegExp(`^${name} +every `, 'm'));
    });
  });

  it('refuses a job it does not know, before touching the store', async () => {
    await withStage('sqlite', async (s) => {
      const r = await s.cli('jobs', 'run', 'nope');
      assert.equal(r.code, 2, show(r));
      assert.equal(r.stderr, 'no job nope; jobs list names them\n');
    });
  });

  for (const kind of DB_KINDS) {
    it(`runs each job once on demand and prints its summary (${kind})`, async () => {
      await withStage(kind, async (s) => {
        for (const name of NAMES) {
          const r = await s.cli('jobs', 'run', name, '--json');
          assert.equal(r.code, 0, show(r));
          const out = JSON.parse(r.stdout) as Record<string, unknown>;
          assert.equal(out.job, name);
        }
        const reminders = JSON.parse((await s.cli('jobs', 'run', 'reminders', '--json')).stdout) as Record<string, unknown>;
        assert.deepEqual(reminders, { job: 'reminders', created: 0, delivered: 0, messages: 0, failed: [] });
        const webhooks = JSON.parse((await s.cli('jobs', 'run', 'webhooks', '--json')).stdout) as Record<string, unknown>;
        assert.deepEqual(webhooks, { job: 'webhooks', queued: 0, attempted: 0 });
        const mail = JSON.parse((await s.cli('jobs', 'run', 'mail', '--json')).stdout) as Record<string, unknown>;
        assert.deepEqual(mail, { job: 'mail', attempted: 0, delivered: 0 }, 'e-mail off: nothing to send');
      });
    });
  }
});
