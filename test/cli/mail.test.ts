// E-mail from real processes: settings refused unless SMTP_URL and MAIL_FROM come
// together; digests queued by the CLI's reminder run delivered by `serve`; two
// `serve` processes on one PostgreSQL send each digest once; a `serve` killed with
// SIGKILL while the server reads a digest sends it again after a restart (the one
// duplicate the design allows); `mail test`, `mail log` and `reports weekly`.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { addUser } from '../../src/admin/accounts.ts';
import { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { SmtpSink } from '../support/smtp.ts';
import { prepareServe, type Served, startServe } from '../support/factories.ts';
import { openStageDatabase, runCli, type Stage, show, withStage } from '../support/stage.ts';

interface Setup extends Served { sink: SmtpSink; users: string[] }

async function setUp(stage: Stage): Promise<Setup> {
  const sink = await SmtpSink.start('starttls');
  writeFileSync(join(stage.dir, 'smtp-ca.pem'), sink.cert.caPem);
  const served = await prepareServe(stage, 'mail', {
    SMTP_URL: sink.url(), MAIL_FROM: 'Asset Tracker <tracker@example.com>', SMTP_CA_FILE: join(stage.dir, 'smtp-ca.pem'), SMTP_TIMEOUT: '2s',
  });
  const database = openStageDatabase(stage);
  const users: string[] = [];
  try {
    for (const name of ['ann', 'ben', 'cem']) {
      await addUser(database, { companyId: 1, username: name, email: `${name}@example.com`, level: name === 'ann' ? 'admin' : 'user' });
      users.push(`${name}@example.com`);
    }
  } finally {
    await database.close();
  }
  return { ...served, sink, users };
}

async function dueAssets(api: TestClient, n: number): Promise<void> {
  const body = Array.from({ length: n }, (_, i) => ({ asset_no: `M-${i}`, description: `meter ${i}`, next_check: '2020-01-01' }));
  assert.equal((await api.put('/3.0/assets', body)).status, 201);
}

const remindersRun = async (stage: Stage, s: Served) => {
  const r = await runCli(['reminders', 'run'], stage.env(s.env));
  assert.equal(r.code, 0, show(r));
  return r.stdout;
};

describe('e-mail settings', () => {
  it('only one of SMTP_URL and MAIL_FROM: start-up refused; neither: e-mail off', async () => {
    await withStage('sqlite', async (stage) => {
      const r = await runCli(['serve'], stage.env({ SMTP_URL: 'smtp://127.0.0.1:2525' }));
      assert.equal(r.code, 1, show(r));
      assert.match(r.stderr, /SMTP_URL and MAIL_FROM must be set together/);
      const off = await runCli(['reminders', 'run'], stage.env());
      assert.equal(off.code, 0, show(off));
      assert.doesNotMatch(off.stdout, /e-mail/);
      const test = await runCli(['mail', 'test', '--to', 'a@example.com'], stage.env());
      assert.equal(test.code, 1);
      assert.match(test.stderr, /e-mail is off: set SMTP_URL and MAIL_FROM/);
    });
  });
});

for (const kind of DB_KINDS) {
  describe(`e-mail from serve (${kind})`, () => {
    it('a digest queued by the CLI is sent by serve; mail test, mail log and reports weekly', async () => {
      await withStage(kind, async (stage) => {
        const s = await setUp(stage);
        // The assets are made through the API; the reminder run is the CLI's, while no serve runs.
        const first = await startServe(stage, { env: s.env });
        const made = new TestClient(first.port, s.serverPem, s.cert);
        await dueAssets(made, 3);
        made.close();
        await first.stop();
        assert.match(await remindersRun(stage, s), /queued 3 e-mail digests/);
        const server = await startServe(stage, { env: { ...s.env, LOG_LEVEL: 'info' } });
        const api = new TestClient(server.port, s.serverPem, s.cert);
        try {
          assert.equal((server.stdout.match(/e-mail on/g) ?? []).length, 1, 'said once at start-up');
          await s.sink.until((m) => m.length >= 3);
          for (const to of s.users) assert.equal(s.sink.to(to).length, 1, to);
          assert.match(s.sink.to('ann@example.com')[0]!.mail.text ?? '', /Overdue 2020-01-01 {2}M-0/);

          const log = await runCli(['mail', 'log'], stage.env(s.env));
          assert.equal(log.code, 0, show(log));
          assert.equal((log.stdout.match(/digest delivered/g) ?? []).length, 3, log.stdout);
          const test = await runCli(['mail', 'test', '--to', 'ops@example.com'], stage.env(s.env));
          assert.equal(test.code, 0, show(test));
          assert.match(test.stdout, /^sent: the server answered "250 .*queued as 4"/);
          s.sink.refuse.add('nobody@example.com');
          const refused = await runCli(['mail', 'test', '--to', 'nobody@example.com'], stage.env(s.env));
          assert.equal(refused.code, 1);
          assert.match(refused.stdout, /^not sent: .*550/);

          const weekly = await runCli(['reports', 'weekly', '--company', '1'], stage.env(s.env));
          assert.equal(weekly.code, 0, show(weekly));
          assert.match(weekly.stdout, /^week \d{4}-W\d{2}: sent to 1 of 1 admin users/);
          const again = await runCli(['reports', 'weekly', '--company', '1'], stage.env(s.env));
          assert.match(again.stdout, /was sent already/);
          assert.equal(s.sink.to('ann@example.com').length, 2);
        } finally {
          api.close();
          await server.dispose();
          await s.sink.close();
        }
      });
    });

    it('SIGKILL while the server reads a digest: after a restart it is sent again (at most once more)', async () => {
      await withStage(kind, async (stage) => {
        const s = await setUp(stage);
        let server = await startServe(stage, { env: s.env });
        const api = new TestClient(server.port, s.serverPem, s.cert);
        try {
          await dueAssets(api, 2);
          s.sink.hold = true;
          await remindersRun(stage, s);
          const deadline = Date.now() + 20_000;
          while (s.sink.dataRead === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          assert.ok(s.sink.dataRead > 0, 'a digest reached the server');
          server.signal('SIGKILL');
          await server.exitStatus;
          api.close();
          s.sink.hold = false;
          server = await startServe(stage, { env: s.env });
          await s.sink.until(() => s.users.every((to) => s.sink.to(to).length >= 1), 30_000);
          await new Promise((r) => setTimeout(r, 3000));
          const counts = s.users.map((to) => s.sink.to(to).length);
          assert.ok(counts.every((n) => n === 1 || n === 2), counts.join());
          assert.ok(counts.filter((n) => n === 2).length <= 1, `only the digest under way may come twice: ${counts.join()}`);
        } finally {
          api.close();
          await server.dispose();
          await s.sink.close();
        }
      });
    });

    if (kind === 'postgres') {
      it('two serve processes on one PostgreSQL send each digest once', async () => {
        await withStage(kind, async (stage) => {
          const s = await setUp(stage);
          const servers = await Promise.all([startServe(stage, { env: s.env }), startServe(stage, { env: s.env })]);
          const api = new TestClient(servers[0].port, s.serverPem, s.cert);
          try {
            await dueAssets(api, 5);
            await remindersRun(stage, s);
            await s.sink.until((m) => m.length >= 3);
            await new Promise((r) => setTimeout(r, 4000));
            assert.deepEqual(s.users.map((to) => s.sink.to(to).length), [1, 1, 1]);
          } finally {
            api.close();
            await Promise.all(servers.map((x) => x.dispose()));
            await s.sink.close();
          }
        });
      });
    }
  });
}
