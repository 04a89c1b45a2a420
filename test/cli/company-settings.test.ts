// `company set` driven as an operator drives it, next to a
// running server: the approver it names is the only certificate that releases the
// queue and adds assets directly; the reminder window and time zone decide what
// the reminder run creates; every change is one audited transaction; invalid
// values are refused with a readable message, a nonzero exit, and no change.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCertificate, buildCompany, startServe, withStore } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { expectCliOk as ok, limited, type Result, show, type Stage, withDatabase, withStage } from '../support/stage.ts';
import type { Asset, Inserted, QueueEntry, Reminder } from '../support/api.ts';

/** A refusal the operator can read: one line on stderr, nothing on stdout, no stack trace, the exit code given. */
function refused(r: Result, code: number, message: RegExp): void {
  assert.equal(r.code, code, show(r));
  assert.equal(r.stdout, '', show(r));
  assert.match(r.stderr, message, show(r));
  assert.doesNotMatch(r.stderr, /\n\s+at /, show(r));
}

/** Today in a time zone, and a date some days after it (YYYY-MM-DD). */
const todayIn = (timeZone: string) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const plusDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** Companies and certificates made as the CLI makes them, in this process (the CLI's own tests cover those commands). */
const setUp = (stage: Stage, companies: readonly [string, number | null][], certs: readonly [string, number][]) => withStore(stage, async (database) => {
  for (const [name, parent] of companies) await buildCompany(database, name, parent);
  const made = [];
  for (const [name, company] of certs) made.push(await buildCertificate(database, company, name));
  return made;
});

const companyAudit = (stage: Stage) => withDatabase(stage, (db) => db.selectFrom('auditlog').selectAll()
  .where('endpoint', '=', 'companies').where('action', '=', 'update').orderBy('id').execute());

for (const kind of DB_KINDS) {
  describe(`asset-tracker company set (${kind})`, () => {
    it('names the approver and the reminder settings: the queue and the reminder run follow them; audited', { timeout: 240_000 }, async () => {
      await withStage(kind, async (stage) => {
        const made = await setUp(stage, [['Acme', null]], [['scanner', 1], ['erp', 1]]);
        const scanner = made[0]!;
        const erp = made[1]!;
        assert.deepEqual([scanner.id, erp.id], [1, 2]);
        const server = await startServe(stage, { env: { LOG_LEVEL: 'info' } });
        try {
          // The server's own reminder run comes once soon after the start (then hourly): past it, only ours run.
          await server.waitForOutput(/"job":"reminders".*"msg":"job ran"/);
          const asScanner = server.client(scanner);
          const asErp = server.client(erp);
          assert.equal((await asScanner.put('/3.0/assets', { asset_no: 'BEFORE' })).status, 201, 'no approver yet: anyone adds assets');

          const set: unknown = JSON.parse(ok(await stage.cli('company', 'set', '1', '--approver', '2', '--reminder-days', '14', '--timezone', 'Europe/Berlin', '--json')));
          assert.deepEqual(set, { id: 1, name: 'Acme', parent_id: null, approver: 2, reminder_days: 14, timezone: 'Europe/Berlin', changed: ['data'] });

          // The approval queue: only certificate 2 releases, and only it adds assets directly.
          const direct = await asScanner.put('/3.0/assets', { asset_no: 'DIRECT' });
          assert.equal(direct.status, 409, direct.text);
          assert.match(direct.text, /company 1 adds assets through assetqueue/);
          const queued = await asScanner.put('/3.0/assetqueue', { asset_no: 'Q-1', description: 'Caliper' });
          assert.equal(queued.status, 201, queued.text);
          const entry: number = queued.reply<Inserted>().ids[0]!;
          const byScanner = await asScanner.post(`/3.0/assetqueue/id=${entry}`, { released: 1 });
          assert.equal(byScanner.status, 400, byScanner.text);
          assert.match(byScanner.text, /invalid field released/);
          assert.equal((await asErp.post(`/3.0/assetqueue/id=${entry}`, { released: 1 })).status, 200);
          const released = (await asErp.get(`/3.0/assetqueue/id=${entry}`)).reply<QueueEntry[]>()[0]!;
          assert.equal(released.released, 1);
          assert.equal((await asErp.get(`/3.0/assets/id=${released.asset_id}`)).reply<Asset[]>()[0]!.asset_no, 'Q-1');

          // The reminder run: a 14-day window in Berlin's today.
          const berlin = todayIn('Europe/Berlin');
          const soon = (await asErp.put('/3.0/assets', { asset_no: 'DUE-10', next_check: plusDays(berlin, 10) })).reply<Inserted>().ids[0]!;
          const later = (await asErp.put('/3.0/assets', { asset_no: 'DUE-20', next_check: plusDays(berlin, 20) })).reply<Inserted>().ids[0]!;
          const run = async () => (JSON.parse(ok(await stage.cli('reminders', 'run', '--json'))) as { created: number }).created;
          const remindersOf = async (asset: number) => (await asErp.get(`/3.0/assetreminders/asset_id=${asset}`)).reply<Reminder[]>()
            .map((r) => [r.due_date, r.remind_date]);
          assert.equal(await run(), 1, 'within 14 days: only DUE-10');
          assert.deepEqual(await remindersOf(soon), [[plusDays(berlin, 10), plusDays(berlin, -4)]], 'reminded 14 days before');
          assert.deepEqual(await remindersOf(later), []);
          ok(await stage.cli('company', 'set', '1', '--reminder-days', '30'));
          assert.equal(await run(), 1, 'within 30 days: DUE-20 too');
          assert.deepEqual(await remindersOf(later), [[plusDays(berlin, 20), plusDays(berlin, -10)]]);

          // The time zone decides "today": Kiritimati (UTC+14) is always a day or two ahead of Pago Pago (UTC-11).
          const edge = plusDays(todayIn('Pacific/Kiritimati'), 30);
          const far = (await asErp.put('/3.0/assets', { asset_no: 'EDGE', next_check: edge })).reply<Inserted>().ids[0]!;
          ok(await stage.cli('company', 'set', '1', '--timezone', 'Pacific/Pago_Pago'));
          assert.equal(await run(), 0, `${edge} is beyond 30 days from today in Pago Pago`);
          ok(await stage.cli('company', 'set', '1', '--timezone', 'pacific/kiritimati'));
          assert.equal(await run(), 1, `${edge} is 30 days from today in Kiritimati`);
          assert.deepEqual(await remindersOf(far), [[edge, plusDays(edge, -30)]]);

          // Each change: one audit entry like an API update's, by the operator (no certificate).
          const audit = await companyAudit(stage);
          assert.equal(audit.length, 4);
          for (const a of audit) assert.deepEqual([a.record_id, a.company_id, a.client_id, a.message].map(String), ['1', '1', 'null', 'Updated companies record 1']);
          assert.deepEqual(JSON.parse(audit[0]!.olddata), { data: null });
          assert.deepEqual(JSON.parse(audit[0]!.newdata), { data: { api_assetqueue_manager_id: 2, reminder_days: 14, timezone: 'Europe/Berlin' } });
          assert.deepEqual(JSON.parse(audit[3]!.newdata), { data: { api_assetqueue_manager_id: 2, reminder_days: 30, timezone: 'Pacific/Kiritimati' } });

          // --approver none: the company needs no approval again.
          assert.match(ok(await stage.cli('company', 'set', '1', '--approver', 'none')), /^changed company 1 "Acme": approver none, reminder days 30, time zone Pacific\/Kiritimati\n$/);
          assert.equal((await asScanner.put('/3.0/assets', { asset_no: 'AFTER' })).status, 201);
          asScanner.close();
          asErp.close();
        } finally {
          await server.stop();
        }
      });
    });

    it('refuses invalid values with a clear message and a nonzero exit, and changes nothing', { timeout: 240_000 }, async () => {
      await withStage(kind, async (stage) => {
        await setUp(stage, [['Acme', null], ['Acme Labs', 1], ['Elsewhere', null], ['Acme Labs Bench', 2]],
          [['labs', 2], ['elsewhere', 3], ['retired', 1]]);
        ok(await stage.cli('client', 'revoke', '3'));
        ok(await stage.cli('company', 'set', '2', '--approver', '1'));
        ok(await stage.cli('company', 'set', '4', '--approver', '1'));
        const before = await companyAudit(stage);
        const checked: [string[], number, RegExp][] = [
          [['1', '--approver', '99'], 1, /^error: certificate 99 does not exist/],
          [['1', '--approver', '3'], 1, /^error: certificate 3 was revoked on .* and cannot approve/],
          [['1', '--approver', '2'], 1, /^error: certificate 2 belongs to company 3, whose scope does not hold company 1/],
          [['1', '--approver', '1'], 1, /^error: certificate 1 belongs to company 2, whose scope does not hold company 1/],
          [['1', '--timezone', 'Mars/Olympus_Mons'], 1, /^error: "Mars\/Olympus_Mons" is not an IANA time zone name/],
          [['1', '--timezone', '+02:00'], 1, /^error: "\+02:00" is not an IANA time zone name/],
          [['1', '--name', ' '], 1, /^error: a company name needs 1 to 1000 characters/],
          [['1', '--parent', '2'], 1, /^error: company 2 is company 1 or below it: the move would make a cycle/],
          [['4', '--parent', '3'], 1, /^error: the move would take company 4 out of the scope of its approving certificate 1/],
          [['9', '--name', 'Ghost'], 1, /^error: company 9 does not exist/],
        ];
        // Option syntax is refused before any database is opened: one engine shows it.
        const usage: [string[], number, RegExp][] = [
          [['1', '--reminder-days', '3651'], 2, /^--reminder-days must be a whole number of days from 0 to 3650/],
          [['1', '--reminder-days', '1.5'], 2, /^--reminder-days must be a whole number of days/],
          [['1', '--reminder-days', 'soon'], 2, /^--reminder-days must be a whole number of days/],
          [['1', '--approver', 'erp'], 2, /^--approver must be a positive integer/],
          [['1'], 2, /^nothing to change\nusage: asset-tracker company set ID/],
          [['--name', 'X'], 2, /^usage: asset-tracker company set ID/],
        ];
        const cases = kind === 'sqlite' ? [...checked, ...usage] : checked;
        const results = await limited(3, cases.map(([args]) => () => stage.cli('company', 'set', ...args)));
        results.forEach((r, i) => refused(r, cases[i]![1], cases[i]![2]));
        assert.deepEqual(await companyAudit(stage), before, 'no refused change was written');
        const tree = JSON.parse(ok(await stage.cli('company', 'list', '--json'))) as { id: number; parent_id: number | null; approver: number | null }[];
        assert.deepEqual(tree.map((c) => [c.id, c.parent_id, c.approver]),
          [[1, null, null], [2, 1, 1], [4, 2, 1], [3, null, null]]);
      });
    });
  });
}

describe('asset-tracker company list, user list', () => {
  it('shows the company trees with their settings, and the users', { timeout: 120_000 }, async () => {
    await withStage('sqlite', async (stage) => {
      for (const [name, parent] of [['Holding', null], ['Labs', '1'], ['Field', '1'], ['Bench', '2'], ['Other', null]] as const) {
        ok(await stage.cli('company', 'add', '--name', name, ...(parent ? ['--parent', parent] : [])));
      }
      ok(await stage.cli('company', 'set', '2', '--reminder-days', '7', '--timezone', 'Asia/Tokyo'));
      assert.equal(ok(await stage.cli('company', 'list')), [
        '1 Holding',
        '├─ 2 Labs  [reminder days 7, Asia/Tokyo]',
        '│  └─ 4 Bench',
        '└─ 3 Field',
        '5 Other',
        '',
      ].join('\n'));
      assert.equal(ok(await stage.cli('user', 'list')), 'no users\n');
      ok(await stage.cli('user', 'add', '--company', '2', '--username', 'rita', '--email', 'rita@example.com', '--level', 'admin'));
      ok(await stage.cli('user', 'add', '--company', '3', '--username', 'sam', '--email', 'sam@example.com'));
      assert.equal(ok(await stage.cli('user', 'list', '--company', '2')), '1\tcompany 2\trita\trita@example.com\tadmin\treminders\tno password\n');
      const users = JSON.parse(ok(await stage.cli('user', 'list', '--json'))) as { username: string; level: string; companyId: number }[];
      assert.deepEqual(users.map((u) => [u.username, u.level, u.companyId]),
        [['rita', 'admin', 2], ['sam', 'user', 3]]);
      assert.ok(!JSON.stringify(users).includes('hash'), 'no password hash is listed');
    });
  });
});
