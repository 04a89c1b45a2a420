// The reminder run works in slices (src/jobs/reminders.ts), each its own
// transaction. Whatever the slicing, its result is exactly what the rule says: one
// reminder per due asset and due date, each active one sent to every user of its
// company who takes reminders, one due notice per asset, audited — compared with a
// model computed here from the seeded assets, row by row (a checksum of every
// reminder, message and notice) — when `asset-tracker reminders run` runs alone,
// when it is killed with SIGKILL halfway and run again, and when two processes run
// it at once. Both engines.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { addUser } from '../../src/admin/accounts.ts';
import type { Database } from '../../src/db/database.ts';
import { prepareStore } from '../../src/store.ts';
import { addDays, formatDate, formatDatetime } from '../../src/model/dates.ts';
import { insertAssets } from '../support/assets-seed.ts';
import { buildCompany } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { createStage, openStageDatabase, runCli, spawnCli, type Stage } from '../support/stage.ts';

/**
 * Per company (two): assets whose check is due, or overdue — and 300 more that are not
 * due or never reminded. REMINDER_SLICES_DUE=50000 runs it over 100,000 due assets.
 */
const DUE_PER_COMPANY = Number(process.env.REMINDER_SLICES_DUE ?? 1200);
const WINDOW = 30;
const NEVER = ['Retired', 'disposed', 'INACTIVE'];

interface Seeded { readonly companies: { id: number; takers: number[] }[] }

async function seed(database: Database, today: string): Promise<Seeded> {
  const companies: Seeded['companies'] = [];
  const now = formatDatetime(new Date());
  for (let c = 0; c < 2; c++) {
    const id = await buildCompany(database, `Slices ${c}`);
    const takers: number[] = [];
    for (let u = 0; u < 3; u++) {
      const userId = await addUser(database, { companyId: id, username: `slices-${c}-${u}-${process.pid}`, email: `s${c}${u}@example.com` });
      // One user of each company takes no reminders.
      if (u === 2) await database.db.updateTable('users').set({ reminders: 0 }).where('id', '=', userId).execute();
      else takers.push(userId);
    }
    companies.push({ id, takers });
    const rows = Array.from({ length: DUE_PER_COMPANY + 300 }, (_, i) => ({
      company_id: id, asset_no: `S${c}-${i}`, serial_no: '', description: i % 3 === 0 ? '' : `Gauge ${i}`,
      // Due (some overdue, some within the window), then not due yet, then never reminded.
      status: i >= DUE_PER_COMPANY + 200 ? NEVER[i % 3]! : 'Active',
      next_check: i < DUE_PER_COMPANY ? addDays(today, (i % (WINDOW + 60)) - 60) : i < DUE_PER_COMPANY + 100 ? addDays(today, WINDOW + 1 + (i % 50))
        : i < DUE_PER_COMPANY + 200 ? null : addDays(today, -(i % 10)),
      date_added: today, modified: now,
    }));
    await insertAssets(database, rows);
  }
  return { companies };
}

const digest = (lines: readonly string[]) => createHash('sha256').update(lines.join('\n')).digest('hex');

/** What the run must leave, by the rule, computed from the seeded assets: row counts and checksums. */
async function expected(database: Database, seeded: Seeded, today: string): Promise<Outcome> {
  const reminders: string[] = [];
  const messages: string[] = [];
  const notices: string[] = [];
  let sent = 0;
  for (const c of seeded.companies) {
    const { rows } = await sql<{ id: number; asset_no: string; description: string; next_check: string | null; status: string }>`
      SELECT id, asset_no, description, next_check, status FROM assets WHERE company_id = ${c.id}`.execute(database.db);
    for (const a of rows) {
      if (a.next_check === null || a.next_check > addDays(today, WINDOW) || NEVER.some((s) => s.toLowerCase() === a.status.toLowerCase())) continue;
      const message = `${a.next_check < today ? 'Overdue' : 'Due'}: check of asset ${a.asset_no}${a.description ? ` (${a.description})` : ''} on ${a.next_check}`;
      const remind = addDays(a.next_check, -WINDOW);
      const isSent = remind <= today ? 1 : 0;
      sent += isSent;
      reminders.push(JSON.stringify([Number(a.id), a.next_check, remind, message, isSent, c.id]));
      notices.push(JSON.stringify([Number(a.id), a.next_check, a.next_check < today ? 'overdue' : 'due']));
      if (isSent) for (const u of c.takers) messages.push(JSON.stringify([u, c.id, message, Number(a.id), a.next_check]));
    }
  }
  return {
    reminders: reminders.length, sent, messages: messages.length, notices: notices.length,
    sums: [digest(reminders.sort()), digest(messages.sort()), digest(notices.sort())],
    audit: { remindersCreated: reminders.length, remindersSent: sent, messagesCreated: messages.length },
    events: { due: notices.length, messages: messages.length },
  };
}

interface Outcome {
  readonly reminders: number; readonly sent: number; readonly messages: number; readonly notices: number;
  readonly sums: readonly string[];
  readonly audit: { readonly remindersCreated: number; readonly remindersSent: number; readonly messagesCreated: number };
  readonly events: { readonly due: number; readonly messages: number };
}

/** What the store holds, in the same terms. */
async function actual(database: Database): Promise<Outcome> {
  const db = database.db;
  const { rows: reminders } = await sql<{ asset_id: number; due_date: string; remind_date: string; message: string; sent: number; company_id: number }>`
    SELECT asset_id, due_date, remind_date, message, sent, company_id FROM assetreminders WHERE user_id IS NULL`.execute(db);
  const { rows: messages } = await sql<{ target_user_id: number; company_id: number; messagetext: string; data: string; reminder: string }>`
    SELECT m.target_user_id, m.company_id, m.messagetext, m.data, r.asset_id || '|' || r.due_date AS reminder
    FROM messages m LEFT JOIN assetreminders r ON r.id = CAST(${sql.raw(database.hooks.kind === 'postgres'
      ? `(m.data::json->>'reminder_id')` : `json_extract(m.data, '$.reminder_id')`)} AS INTEGER)`.execute(db);
  const { rows: notices } = await sql<{ asset_id: number; due_date: string; kind: string }>`SELECT asset_id, due_date, kind FROM due_notices`.execute(db);
  const count = async (q: ReturnType<typeof sql>) => Number(((await q.execute(db)).rows[0] as { n: number | string }).n);
  const messageLines = messages.map((m) => {
    const data = JSON.parse(m.data) as { asset_id: number; due_date: string };
    // The message's data names its reminder, whose asset and due date it repeats.
    assert.equal(m.reminder, `${data.asset_id}|${data.due_date}`);
    return JSON.stringify([Number(m.target_user_id), Number(m.company_id), m.messagetext, data.asset_id, data.due_date]);
  });
  return {
    reminders: reminders.length, sent: reminders.filter((r) => Number(r.sent) === 1).length, messages: messages.length, notices: notices.length,
    sums: [
      digest(reminders.map((r) => JSON.stringify([Number(r.asset_id), r.due_date, r.remind_date, r.message, Number(r.sent), Number(r.company_id)])).sort()),
      digest(messageLines.sort()),
      digest(notices.map((n) => JSON.stringify([Number(n.asset_id), n.due_date, n.kind])).sort()),
    ],
    audit: {
      remindersCreated: await count(sql`SELECT COUNT(*) AS n FROM auditlog WHERE endpoint = 'assetreminders' AND action = 'create'`),
      remindersSent: await count(sql`SELECT COUNT(*) AS n FROM auditlog WHERE endpoint = 'assetreminders' AND action = 'update'`),
      messagesCreated: await count(sql`SELECT COUNT(*) AS n FROM auditlog WHERE endpoint = 'messages' AND action = 'create'`),
    },
    events: {
      due: await count(sql`SELECT COUNT(*) AS n FROM events WHERE event IN ('assets.due', 'assets.overdue')`),
      messages: await count(sql`SELECT COUNT(*) AS n FROM events WHERE event = 'messages.created'`),
    },
  };
}

for (const kind of DB_KINDS) {
  describe(`reminder runs in slices (${kind})`, () => {
    const today = formatDate(new Date());

    /** A fresh seeded store, its model, and a handle on it. */
    async function prepared(): Promise<{ stage: Stage; database: Database; model: Outcome }> {
      const stage = await createStage(kind, 'asset-tracker-slices-');
      const database = openStageDatabase(stage);
      await prepareStore(database);
      const seeded = await seed(database, today);
      return { stage, database, model: await expected(database, seeded, today) };
    }
    const open: { stage: Stage; database: Database }[] = [];
    after(async () => {
      for (const o of open) { await o.database.close(); await o.stage.dispose(); }
    });
    let reference: Outcome;
    before(async () => {
      const p = await prepared();
      open.push(p);
      reference = p.model;
      assert.ok(reference.sent > 2000 && reference.messages > 4000 && reference.notices === reference.reminders, 'the model has work of every kind');
    });

    it('one run leaves exactly what the rule says, row for row', async () => {
      const p = await prepared();
      open.push(p);
      const r = await runCli(['reminders', 'run', '--json'], p.stage.env());
      assert.equal(r.code, 0, r.stderr);
      const run = JSON.parse(r.stdout) as { created: number; delivered: number; messages: number };
      assert.deepEqual([run.created, run.delivered, run.messages], [p.model.reminders, p.model.sent, p.model.messages]);
      assert.deepEqual(await actual(p.database), p.model);
      assert.deepEqual(p.model.sums, reference.sums, 'the same seed makes the same rows');
    });

    it('a run killed halfway with SIGKILL and run again leaves the same', async () => {
      const p = await prepared();
      open.push(p);
      const child = spawnCli(['reminders', 'run', '--json'], p.stage.env());
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, signal) => resolve(signal)));
      // Killed once its first slices of messages are committed, while more remain.
      const deadline = Date.now() + Math.max(60_000, 10 * DUE_PER_COMPANY);
      for (;;) {
        const sent = Number((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM messages`.execute(p.database.db)).rows[0]!.n);
        if (sent > 0) break;
        assert.ok(Date.now() < deadline, 'the run delivered nothing in time');
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL', 'the run was still going when it was killed');
      const halfway = await actual(p.database);
      assert.ok(halfway.messages < p.model.messages, `killed before the end (${halfway.messages} of ${p.model.messages} messages)`);
      const again = await runCli(['reminders', 'run', '--json'], p.stage.env());
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(await actual(p.database), p.model);
    });

    it('two processes running it at once leave the same', async () => {
      const p = await prepared();
      open.push(p);
      const runs = await Promise.all([0, 1].map(() => runCli(['reminders', 'run', '--json'], p.stage.env())));
      for (const r of runs) assert.equal(r.code, 0, r.stderr);
      const totals = runs.map((r) => JSON.parse(r.stdout) as { created: number; delivered: number; messages: number });
      assert.deepEqual([totals[0]!.created + totals[1]!.created, totals[0]!.delivered + totals[1]!.delivered, totals[0]!.messages + totals[1]!.messages],
        [p.model.reminders, p.model.sent, p.model.messages]);
      assert.deepEqual(await actual(p.database), p.model);
    });
  });
}
