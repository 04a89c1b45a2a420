// Check dates and reminders: windows, time zones, statuses,
// idempotence, delivery to the right users only, audit, concurrent runs on one
// database (also from separate handles/pools), the due/overdue filters and the
// CLI `reminders run`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { addCompany, addUser } from '../../src/admin/accounts.ts';
import { operatorContext } from '../../src/resources/registry.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { prepareStore } from '../../src/store.ts';
import { createRecords } from '../../src/engine/write.ts';
import { type ReminderRun, runReminders } from '../../src/jobs/reminders.ts';
import { addDays, formatDate } from '../../src/model/dates.ts';
import { JsonObject, parseJson } from '../../src/model/json.ts';
import { assets } from '../../src/resources/assets.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, freshDatabase, type Service, TestClock } from '../support/harness.ts';
import { cleanEnv, runCli } from '../support/stage.ts';
import { login, runAt, uniqueName, user } from '../support/workflows.ts';
import { create, expectOk, list, start, stop, update } from './resources-support.ts';
import type { Message, Reminder, Updated } from '../support/api.ts';

/** The run's "today" in UTC and the instant the runs happen at (midday, far from any date line). */
const TODAY = '2031-03-10';
const NOON = `${TODAY}T12:00:00Z`;

/** A row of the messages table (the reminder run writes them). */
interface MessageRow { id: number; sender_user_id: number | null; target_user_id: number | null; company_id: number; message_read: number;
  messagetext: string }

for (const kind of DB_KINDS) {
  describe(`reminder runs (${kind})`, () => {
    let svc: Service;
    before(async () => { svc = await start(kind); });
    after(() => stop(svc));

    /** A root company (with `data` set through the API) and its certificate's client. */
    async function tenant(data?: object, parent: number | null = null): Promise<{ id: number; api: TestClient }> {
      const id = await svc.company(uniqueName('Co'), parent);
      const api = (await svc.certificate(id)).client;
      if (data) assert.equal(expectOk<Updated>(await api.post(`/3.0/companies/id=${id}`, { data })).records_updated, 1);
      return { id, api };
    }
    const asset = (api: TestClient, body: object) => create(api, 'assets', { asset_no: uniqueName('A'), ...body });
    const remindersOf = (api: TestClient, assetId: number): Promise<Reminder[]> => list(api, `assetreminders/asset_id=${assetId}`);
    const messagesOf = async (companyIds: readonly number[]) =>
      (await sql<MessageRow>`SELECT * FROM messages WHERE company_id IN (${sql.join(companyIds)}) ORDER BY id`.execute(svc.database.db)).rows;
    const messagesTo = async (userId: number) =>
      (await sql<MessageRow>`SELECT * FROM messages WHERE target_user_id = ${userId} ORDER BY id`.execute(svc.database.db)).rows;

    it('the default window is 30 days; remind_date = due − window; overdue assets are reminded too', async () => {
      const { id: co, api } = await tenant();
      const due30 = await asset(api, { next_check: addDays(TODAY, 30) });
      const due31 = await asset(api, { next_check: addDays(TODAY, 31) });
      const dueToday = await asset(api, { next_check: TODAY });
      const overdue = await asset(api, { next_check: '2031-02-01' });
      const unset = await asset(api, {});
      await runAt(svc, NOON);
      const r30 = await remindersOf(api, due30);
      assert.equal(r30.length, 1);
      assert.deepEqual({ ...r30[0], id: 0, message: '' }, {
        id: 0, company_id: co, asset_id: due30, user_id: null, due_date: addDays(TODAY, 30), remind_date: TODAY, message: '',
        sent: 1, acknowledged: 0, data: null, asset: r30[0]!.asset, user: null,
      });
      assert.equal(r30[0]!.asset!.id, due30);
      assert.deepEqual(await remindersOf(api, due31), []);
      assert.deepEqual((await remindersOf(api, dueToday)).map((r) => [r.due_date, r.remind_date]), [[TODAY, addDays(TODAY, -30)]]);
      assert.deepEqual((await remindersOf(api, overdue)).map((r) => [r.due_date, r.remind_date]), [['2031-02-01', '2031-01-02']]);
      assert.deepEqual(await remindersOf(api, unset), []);
      // The next day the 31-day asset comes into the window.
      await runAt(svc, `${addDays(TODAY, 1)}T12:00:00Z`);
      assert.deepEqual((await remindersOf(api, due31)).map((r) => [r.due_date, r.remind_date]), [[addDays(TODAY, 31), addDays(TODAY, 1)]]);
    });

    it('a company\'s data.reminder_days sets its window (0 = on the day)', async () => {
      const week = await tenant({ reminder_days: 7 });
      const zero = await tenant({ reminder_days: 0 });
      const in7 = await asset(week.api, { next_check: addDays(TODAY, 7) });
      const in8 = await asset(week.api, { next_check: addDays(TODAY, 8) });
      const on = await asset(zero.api, { next_check: TODAY });
      const tomorrow = await asset(zero.api, { next_check: addDays(TODAY, 1) });
      await runAt(svc, NOON);
      assert.deepEqual((await remindersOf(week.api, in7)).map((r) => [r.due_date, r.remind_date]), [[addDays(TODAY, 7), TODAY]]);
      assert.deepEqual(await remindersOf(week.api, in8), []);
      assert.deepEqual((await remindersOf(zero.api, on)).map((r) => [r.due_date, r.remind_date]), [[TODAY, TODAY]]);
      assert.deepEqual(await remindersOf(zero.api, tomorrow), []);
    });

    it('"today" is the company\'s data.timezone: Auckland is a day ahead near midnight UTC, Los Angeles a day behind', async () => {
      const auckland = await tenant({ reminder_days: 0, timezone: 'Pacific/Auckland' });
      const utc = await tenant({ reminder_days: 0 });
      const angeles = await tenant({ reminder_days: 0, timezone: 'America/Los_Angeles' });
      const utc2 = await tenant({ reminder_days: 0, timezone: 'UTC' });
      const [a, u, l, u2] = await Promise.all([auckland, utc, angeles, utc2].map((t) => asset(t.api, { next_check: '2031-01-16' })));
      // Reminders made by hand, active on 2031-01-16: delivery follows the same "today".
      const recipients = await Promise.all([auckland, utc].map((t) => user(svc, t.id)));
      const manual = await Promise.all([[auckland, a], [utc, u]].map(([t, id]) => create((t as typeof auckland).api, 'assetreminders',
        { asset_id: id, due_date: '2031-02-01', remind_date: '2031-01-16', message: 'by hand' })));

      // 23:30 UTC on the 15th is the 16th in Auckland.
      await runAt(svc, '2031-01-15T23:30:00Z');
      assert.deepEqual((await remindersOf(auckland.api, a!)).filter((r) => r.id !== manual[0]).map((r) => [r.due_date, r.remind_date, r.sent]),
        [['2031-01-16', '2031-01-16', 1]]);
      assert.deepEqual((await remindersOf(utc.api, u!)).filter((r) => r.id !== manual[1]), []);
      const [byHandAuckland, byHandUtc] = await Promise.all([auckland, utc].map((t, i) => list(t.api, `assetreminders/id=${manual[i]}`)));
      assert.equal(byHandAuckland![0]!.sent, 1);
      assert.equal(byHandUtc![0]!.sent, 0);
      assert.deepEqual((await messagesTo(recipients[0]!.id)).map((m) => m.messagetext).sort(),
        [(await remindersOf(auckland.api, a!)).find((r) => r.id !== manual[0])!.message, 'by hand'].sort());
      assert.deepEqual(await messagesTo(recipients[1]!.id), []);

      // 00:30 UTC on the 16th is still the 15th in Los Angeles.
      await runAt(svc, '2031-01-16T00:30:00Z');
      assert.deepEqual((await remindersOf(utc2.api, u2!)).map((r) => [r.due_date, r.remind_date]), [['2031-01-16', '2031-01-16']]);
      assert.deepEqual(await remindersOf(angeles.api, l!), []);
      assert.equal((await list(utc.api, `assetreminders/id=${manual[1]}`))[0]!.sent, 1);
      // At 08:30 UTC it is the 16th in Los Angeles too.
      await runAt(svc, '2031-01-16T08:30:00Z');
      assert.deepEqual((await remindersOf(angeles.api, l!)).map((r) => [r.due_date, r.remind_date]), [['2031-01-16', '2031-01-16']]);
    });

    it('assets Retired, Disposed or Inactive (any case) are never reminded, not even by a reminder made by hand', async () => {
      const { id: co, api } = await tenant();
      const taker = await user(svc, co);
      const still = await Promise.all(['Active', 'In use', 'Retiring'].map((status) => asset(api, { status, next_check: TODAY })));
      const never = await Promise.all(['Retired', 'DISPOSED', 'inactive', 'rEtIrEd', 'Disposed', 'Inactive']
        .map((status) => asset(api, { status, next_check: TODAY })));
      const byHand = await create(api, 'assetreminders', { asset_id: never[0], due_date: TODAY, remind_date: TODAY, message: 'retired by hand' });
      await runAt(svc, NOON);
      for (const id of still) assert.equal((await remindersOf(api, id)).length, 1, `asset ${id} is reminded`);
      for (const id of never.slice(1)) assert.deepEqual(await remindersOf(api, id), [], `asset ${id} is never reminded`);
      assert.deepEqual((await remindersOf(api, never[0]!)).map((r) => r.id), [byHand]);
      const texts = (await messagesTo(taker.id)).map((m) => m.messagetext);
      assert.equal(texts.length, still.length);
      assert.ok(!texts.includes('retired by hand'), 'a retired asset\'s reminder is not delivered');
    });

    it('a run is idempotent: a second run (the same instant or later) creates and sends nothing more', async () => {
      const { id: co, api } = await tenant();
      const taker = await user(svc, co);
      const ids = await Promise.all([0, 5, 29].map((d) => asset(api, { next_check: addDays(TODAY, d) })));
      const first = await runAt(svc, NOON);
      assert.ok(first.created >= 3 && first.messages >= 3, JSON.stringify(first));
      const reminders = await list(api, `assetreminders/company_id=${co}`);
      const messages = await messagesTo(taker.id);
      assert.equal(reminders.length, 3);
      assert.equal(messages.length, 3);
      assert.deepEqual(await runAt(svc, NOON), { created: 0, delivered: 0, messages: 0, failed: [] });
      await runAt(svc, `${addDays(TODAY, 1)}T12:00:00Z`);
      await runAt(svc, `${addDays(TODAY, 1)}T13:00:00Z`);
      assert.deepEqual(await list(api, `assetreminders/company_id=${co}`), reminders);
      assert.deepEqual(await messagesTo(taker.id), messages);
      assert.deepEqual(ids.map(() => 1), await Promise.all(ids.map(async (id) => (await remindersOf(api, id)).length)));
    });

    it('a changed next_check makes a new reminder and leaves the old one alone', async () => {
      const { id: co, api } = await tenant();
      const taker = await user(svc, co);
      const id = await asset(api, { next_check: addDays(TODAY, 10) });
      await runAt(svc, NOON);
      const [old] = await remindersOf(api, id);
      assert.equal(old!.sent, 1);
      assert.equal((await update(api, `assets/id=${id}`, { next_check: addDays(TODAY, 20) })).records_updated, 1);
      await runAt(svc, NOON);
      const now = await remindersOf(api, id);
      assert.equal(now.length, 2);
      assert.deepEqual({ ...now[0], asset: null }, { ...old, asset: null });
      assert.deepEqual([now[1]!.due_date, now[1]!.remind_date, now[1]!.sent], [addDays(TODAY, 20), addDays(TODAY, -10), 1]);
      assert.equal((await messagesTo(taker.id)).length, 2);
      // Back to the first date: that reminder exists already, nothing new.
      await update(api, `assets/id=${id}`, { next_check: addDays(TODAY, 10) });
      assert.deepEqual(await runAt(svc, NOON), { created: 0, delivered: 0, messages: 0, failed: [] });
      assert.equal((await remindersOf(api, id)).length, 2);
    });

    it('delivers only to users with reminders=1 of the asset\'s own company — not to a parent\'s, a child\'s or another tree\'s', async () => {
      const parent = await tenant();
      const mid = await tenant(undefined, parent.id);
      const child = await tenant(undefined, mid.id);
      const other = await tenant();
      const impersonating = await svc.certificate(parent.id, { impersonation: true });
      const takes = await user(svc, mid.id);
      const takes2 = await user(svc, mid.id, { level: 'readonly' });
      const declines = await user(svc, mid.id, { reminders: 0 });
      const parentUser = await user(svc, parent.id);
      const childUser = await user(svc, child.id);
      const otherUser = await user(svc, other.id);
      const id = await asset(parent.api, { company_id: mid.id, next_check: addDays(TODAY, 3), description: 'Scale' });
      await runAt(svc, NOON);
      const [reminder] = await remindersOf(parent.api, id);
      assert.equal(reminder!.company_id, mid.id);
      assert.equal(reminder!.sent, 1);
      const sent = await messagesOf([parent.id, mid.id, child.id, other.id]);
      assert.deepEqual(sent.map((m) => [m.target_user_id, m.company_id, m.messagetext, m.sender_user_id, m.message_read]),
        [takes.id, takes2.id].map((u) => [u, mid.id, reminder!.message, null, 0]));
      for (const u of [declines, parentUser, childUser, otherUser]) assert.deepEqual(await messagesTo(u.id), []);
      // Each recipient sees it in a session; the others see nothing of it.
      for (const [u, n] of [[takes, 1], [takes2, 1], [declines, 0], [parentUser, 0], [childUser, 0]] as const) {
        const seen = expectOk<Message[]>(await impersonating.client.get('/3.0/messages', { headers: await login(impersonating.client, u) }));
        assert.equal(seen.filter((m: { messagetext: string }) => m.messagetext === reminder!.message).length, n, u.username);
      }
    });

    it('a reminder for one user (user_id set) goes to that user only, once it is active', async () => {
      const { id: co, api } = await tenant();
      const target = await user(svc, co);
      const bystander = await user(svc, co);
      const id = await asset(api, {});
      const active = await create(api, 'assetreminders', { asset_id: id, user_id: target.id, due_date: '2031-04-01', remind_date: addDays(TODAY, -1),
        message: 'Calibrate the scale' });
      const later = await create(api, 'assetreminders', { asset_id: id, user_id: target.id, due_date: '2031-05-01', remind_date: addDays(TODAY, 1),
        message: 'Later' });
      await runAt(svc, NOON);
      assert.deepEqual((await messagesTo(target.id)).map((m) => [m.messagetext, m.company_id]), [['Calibrate the scale', co]]);
      assert.deepEqual(await messagesTo(bystander.id), []);
      assert.deepEqual((await remindersOf(api, id)).map((r) => [r.id, r.sent]), [[active, 1], [later, 0]]);
      await runAt(svc, `${addDays(TODAY, 1)}T12:00:00Z`);
      assert.deepEqual((await messagesTo(target.id)).map((m) => m.messagetext), ['Calibrate the scale', 'Later']);
      assert.deepEqual(await messagesTo(bystander.id), []);
      assert.deepEqual((await remindersOf(api, id)).map((r) => r.sent), [1, 1]);
    });

    it('writes audit entries for the reminders it creates and sends and for the messages', async () => {
      const { id: co, api } = await tenant();
      const taker = await user(svc, co);
      const id = await asset(api, { next_check: addDays(TODAY, 2) });
      await runAt(svc, NOON);
      const [reminder] = await remindersOf(api, id);
      const entries = await list(api, `auditlog/endpoint=assetreminders/record_id=${reminder!.id}`);
      assert.deepEqual(entries.map((e) => [e.action, e.company_id, e.asset_id]), [['create', co, id], ['update', co, id]]);
      assert.equal(entries[0]!.newdata.due_date, addDays(TODAY, 2));
      assert.deepEqual([entries[1]!.olddata, entries[1]!.newdata], [{ sent: 0 }, { sent: 1 }]);
      assert.deepEqual(entries.map((e) => e.logdate), ['2031-03-10 12:00:00', '2031-03-10 12:00:00']);
      const [message] = await messagesTo(taker.id);
      const created = await list(api, `auditlog/endpoint=messages/record_id=${message!.id}`);
      assert.deepEqual(created.map((e) => [e.action, e.company_id]), [['create', co]]);
      assert.equal(created[0]!.newdata.target_user_id, taker.id);
    });

    it('two runs at once (Promise.all on one handle) create no duplicate reminders and send no duplicate messages', async () => {
      const { id: co, api } = await tenant();
      const takers = await Promise.all([1, 2].map(() => user(svc, co)));
      const ids = [];
      for (let i = 0; i < 12; i++) ids.push(await asset(api, { next_check: addDays(TODAY, i) }));
      const at = '2031-03-10T15:00:00Z';
      const runs = await Promise.all([runAt(svc, at), runAt(svc, at), runAt(svc, at)]);
      const reminders = await list(api, `assetreminders/company_id=${co}`);
      assert.equal(reminders.length, 12);
      assert.ok(reminders.every((r) => r.sent === 1));
      for (const t of takers) assert.equal((await messagesTo(t.id)).length, 12);
      assert.ok(runs.reduce((n, r) => n + r.created, 0) >= 12);
    });

    it('the due and overdue filters of the README: next_check-DATE (due) and next_check<today (overdue)', async () => {
      const { id: co, api } = await tenant();
      const byDate = new Map<string, number>();
      for (const d of ['2031-02-01', addDays(TODAY, -1), TODAY, addDays(TODAY, 29), addDays(TODAY, 30), addDays(TODAY, 31)]) {
        byDate.set(d, await asset(api, { next_check: d }));
      }
      await asset(api, {});
      const dates = async (path: string) => (await list(api, `assets/company_id=${co}/${path}`)).map((a) => a.next_check);
      const horizon = addDays(TODAY, 30);
      assert.deepEqual(await dates(`next_check-${horizon}`), ['2031-02-01', addDays(TODAY, -1), TODAY, addDays(TODAY, 29), horizon]);
      assert.deepEqual(await dates(`next_check-=${horizon}`), await dates(`next_check-${horizon}`));
      assert.deepEqual(await dates(`next_check<${horizon}`), ['2031-02-01', addDays(TODAY, -1), TODAY, addDays(TODAY, 29)]);
      assert.deepEqual(await dates(`next_check<${TODAY}`), ['2031-02-01', addDays(TODAY, -1)]);
      // The reminder run reminds exactly the due set.
      await runAt(svc, NOON);
      const reminded = (await list(api, `assetreminders/company_id=${co}`)).map((r) => r.due_date).sort();
      assert.deepEqual(reminded, await dates(`next_check-${horizon}`));
    });
  });

  describe(`concurrent reminder runs from separate processes and handles (${kind})`, () => {
    const handles: Database[] = [];
    let cleanup: () => Promise<void> = async () => {};
    after(async () => {
      for (const h of handles) await h.close();
      await cleanup();
    });

    // SQLite: three CLI processes on one data directory (better-sqlite3 waits for a
    // lock synchronously, so only separate processes can share a file at once).
    // PostgreSQL: two CLI processes and two runs on each of two pools of this process.
    it('concurrent runs make each reminder and each message exactly once', async () => {
      let seedDb: Database;
      let env: NodeJS.ProcessEnv;
      if (kind === 'postgres') {
        const fresh = await freshDatabase(kind);
        cleanup = () => fresh.drop();
        seedDb = fresh.database;
        env = { DATABASE_URL: fresh.url };
      } else {
        const dir = mkdtempSync(join(tmpdir(), 'asset-tracker-reminders-'));
        seedDb = openDatabase({ dataDir: dir });
        await prepareStore(seedDb);
        handles.push(seedDb);
        cleanup = async () => rmSync(dir, { recursive: true, force: true });
        env = { DATA_DIR: dir };
      }
      const today = formatDate(new Date());
      for (let c = 0; c < 3; c++) {
        const co = await addCompany(seedDb, `Concurrent ${c}`, null);
        for (let u = 0; u < 3; u++) await addUser(seedDb, { companyId: co, username: uniqueName('cu'), email: `${uniqueName('cu')}@example.com` });
        const bodies = Array.from({ length: 20 }, (_, i) => parseJson(JSON.stringify({ asset_no: `C${c}-${i}`, next_check: addDays(today, i - 5) })) as JsonObject);
        await createRecords(operatorContext(seedDb, co), assets, bodies);
      }
      const runs: ReminderRun[] = [];
      const processes = Array.from({ length: kind === 'postgres' ? 2 : 3 }, () => cli(['reminders', 'run', '--json'], env).then((r) => {
        assert.equal(r.code, 0, r.stderr);
        runs.push(JSON.parse(r.stdout) as ReminderRun);
      }));
      if (kind === 'postgres') {
        const second = openDatabase({ url: env.DATABASE_URL, dataDir: tmpdir(), poolSize: 5 });
        handles.push(second);
        const clock = new TestClock();
        const local = [seedDb, second, seedDb, second].map((d) => runReminders(d, clock).then((r) => { runs.push(r); }));
        await Promise.all([...processes, ...local]);
      } else {
        await Promise.all(processes);
      }
      const total = (q: ReturnType<typeof sql>) => q.execute(seedDb.db).then((r) => Number((r.rows[0] as { n: string | number }).n));
      assert.equal(await total(sql`SELECT COUNT(*) AS n FROM assetreminders`), 60);
      assert.equal(await total(sql`SELECT COUNT(DISTINCT asset_id) AS n FROM assetreminders`), 60);
      assert.equal(await total(sql`SELECT COUNT(*) AS n FROM assetreminders WHERE sent = 1`), 60);
      assert.equal(await total(sql`SELECT COUNT(*) AS n FROM messages`), 180);
      assert.equal(await total(sql`SELECT COUNT(*) AS n FROM (SELECT DISTINCT target_user_id, messagetext FROM messages) x`), 180);
      assert.equal(await total(sql`SELECT COUNT(*) AS n FROM auditlog WHERE endpoint = 'assetreminders' AND action = 'create'`), 60);
      assert.equal(await total(sql`SELECT COUNT(*) AS n FROM auditlog WHERE endpoint = 'messages' AND action = 'create'`), 180);
      assert.deepEqual([runs.reduce((n, r) => n + r.created, 0), runs.reduce((n, r) => n + r.delivered, 0), runs.reduce((n, r) => n + r.messages, 0)],
        [60, 60, 180]);
    });
  });
}

/** `asset-tracker …` as a separate process with the given settings (and none of the developer's). */
const cli = (args: readonly string[], settings: NodeJS.ProcessEnv) => runCli(args, cleanEnv(settings));

describe('CLI: asset-tracker reminders run --json (sqlite)', () => {
  let dir: string;
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  it('reminds the due assets of the data directory\'s database and says so in JSON; a second run does nothing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'asset-tracker-cli-reminders-'));
    const database = openDatabase({ dataDir: dir });
    await prepareStore(database);
    const co = await addCompany(database, 'CLI Co', null);
    const users = [await addUser(database, { companyId: co, username: uniqueName('cli'), email: 'cli1@example.com' }),
      await addUser(database, { companyId: co, username: uniqueName('cli'), email: 'cli2@example.com' })];
    const today = formatDate(new Date());
    const body = (o: object) => parseJson(JSON.stringify(o)) as JsonObject;
    await createRecords(operatorContext(database, co), assets, [body({ asset_no: 'OVERDUE', next_check: addDays(today, -3) }),
      body({ asset_no: 'LATER', next_check: addDays(today, 60) })]);
    await database.close();

    const first = await cli(['reminders', 'run', '--json'], { DATA_DIR: dir });
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { created: 1, delivered: 1, messages: 2, failed: [] });
    const second = await cli(['reminders', 'run', '--json'], { DATA_DIR: dir });
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(JSON.parse(second.stdout), { created: 0, delivered: 0, messages: 0, failed: [] });
    const human = await cli(['reminders', 'run'], { DATA_DIR: dir });
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^created 0 reminders/);

    const check = openDatabase({ dataDir: dir });
    try {
      const { rows: reminders } = await sql<Reminder>`SELECT * FROM assetreminders`.execute(check.db);
      assert.deepEqual(reminders.map((r) => [r.due_date, r.remind_date, Number(r.sent), r.user_id]), [[addDays(today, -3), addDays(today, -33), 1, null]]);
      const { rows: messages } = await sql<MessageRow>`SELECT * FROM messages ORDER BY target_user_id`.execute(check.db);
      assert.deepEqual(messages.map((m) => [Number(m.target_user_id), Number(m.company_id)]), users.map((u) => [u, co]));
    } finally {
      await check.close();
    }
  });
});

