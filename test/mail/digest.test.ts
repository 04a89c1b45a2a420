// Reminder digests by e-mail, against a real SMTP server on 127.0.0.1: one digest per
// user who takes reminders, with the assets that came due for them, both parts, the
// one-click unsubscribe headers; users without an address or refused by the server
// skipped without blocking the others; no header can be injected; the unsubscribe
// link; delivery after the server was down, and after a bad certificate.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runReminders } from '../../src/jobs/reminders.ts';
import { MailSender } from '../../src/mail/outbox.ts';
import type { MailSettings } from '../../src/mail/settings.ts';
import { addDays } from '../../src/model/dates.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service, TestClock } from '../support/harness.ts';
import { chained } from '../support/certs.ts';
import { SmtpSink } from '../support/smtp.ts';
import { uniqueName, user } from '../support/workflows.ts';
import { create, one, start, stop } from '../http/resources-support.ts';

const TODAY = '2031-03-10';
const NOON = Date.parse(`${TODAY}T12:00:00Z`);
const PORTAL = 'https://portal.example.com';

const settingsFor = (svc: Service, sink: SmtpSink, ca = sink.cert.caPem): MailSettings => ({
  smtpUrl: sink.url(), from: 'Asset Tracker <tracker@example.com>', ca, baseUrl: svc.baseUrl, portalBaseUrl: PORTAL, timeoutMs: 5000,
});

const outboxOf = (svc: Service, companyId: number) => svc.database.db.selectFrom('mail_outbox').selectAll().where('company_id', '=', companyId)
  .orderBy('id').execute();

for (const kind of DB_KINDS) {
  describe(`reminder digests by e-mail (${kind})`, () => {
    let svc: Service;
    before(async () => { svc = await start(kind); });
    after(() => stop(svc));

    async function tenant(): Promise<{ id: number; api: TestClient }> {
      const id = await svc.company(uniqueName('Co'));
      return { id, api: (await svc.certificate(id)).client };
    }
    const asset = (api: TestClient, body: object) => create(api, 'assets', { asset_no: uniqueName('A'), description: 'gauge', ...body });
    const setUser = (id: number, values: { email?: string; first_name?: string; reminders?: number }) =>
      svc.database.db.updateTable('users').set(values).where('id', '=', id).execute();

    it('one digest per user who takes reminders, with their due assets, both parts and the unsubscribe headers; once', async () => {
      const sink = await SmtpSink.start('starttls');
      try {
        const { id: co, api } = await tenant();
        await svc.database.db.updateTable('companies').set({ name: 'Acme <Labs> & "Sons"\r\nBcc: evil@example.net' }).where('id', '=', co).execute();
        const [alice, bob, carol, dave, erin] = await Promise.all([0, 1, 2, 3, 4].map(() => user(svc, co)));
        await setUser(alice!.id, { email: 'alice@example.com', first_name: 'Alice\r\nBcc: evil2@example.net' });
        await setUser(bob!.id, { email: 'bob@example.com' });
        await setUser(carol!.id, { email: 'carol@example.com', reminders: 0 });
        await setUser(dave!.id, { email: '' });
        await setUser(erin!.id, { email: 'erin@example.com' });
        sink.refuse.add('erin@example.com');
        const overdue = await asset(api, { next_check: '2031-02-01', description: '<script>x</script>\r\nBcc: evil3@example.net' });
        const due = await asset(api, { next_check: addDays(TODAY, 10) });
        const later = await asset(api, { next_check: addDays(TODAY, 40) });
        const retired = await asset(api, { next_check: '2031-02-01', status: 'RETIRED' });
        const clock = new TestClock(NOON);
        const run = await runReminders(svc.database, clock, { mail: true });
        assert.equal(run.digests, 4, 'alice, bob, dave and erin take reminders');
        const sender = new MailSender(svc.database, settingsFor(svc, sink), { clock });
        assert.deepEqual(await sender.pass(), { attempted: 4, delivered: 2 });
        sender.close();
        assert.deepEqual(sink.messages.map((m) => m.to).sort(), [['alice@example.com'], ['bob@example.com']]);
        const mail = sink.to('alice@example.com')[0]!;
        assert.ok(mail.secure, 'STARTTLS was used');
        const numbers = async (id: number) => (await one(api, 'assets', id)).asset_no;
        const [noOverdue, noDue, noLater, noRetired] = await Promise.all([overdue, due, later, retired].map(numbers));
        const text = mail.mail.text ?? '';
        assert.match(text, new RegExp(`Overdue 2031-02-01  ${noOverdue}`));
        assert.match(text, new RegExp(`Due ${addDays(TODAY, 10)}  ${noDue}`));
        assert.ok(!text.includes(noLater!) && !text.includes(noRetired!));
        assert.ok(text.includes(`${PORTAL}/assets/${overdue}`));
        const html = String(mail.mail.html);
        assert.ok(html.includes('&lt;script&gt;x&lt;/script&gt;') && !html.includes('<script>'));
        assert.ok(html.includes('Acme &lt;Labs&gt; &amp; &quot;Sons&quot;'));
        assert.ok(html.includes(`href="${PORTAL}/assets/${due}"`));
        assert.match(mail.raw, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
        assert.match(mail.raw, /^List-Unsubscribe:\s+<https:\/\/localhost:8443\/unsubscribe\/\d+\.[A-Za-z0-9_-]{43}>\r?$/m);
        // No header was injected: the message's only recipient is alice, no Bcc line anywhere in the header block.
        for (const m of sink.messages) {
          const head = m.raw.slice(0, m.raw.indexOf('\r\n\r\n'));
          assert.doesNotMatch(head, /^bcc:/im);
          assert.equal(m.to.length, 1);
          assert.equal(m.mail.subject?.includes('\n'), false);
        }
        const rows = await outboxOf(svc, co);
        const byUser = new Map(rows.map((r) => [Number(r.user_id), r]));
        assert.equal(byUser.get(dave!.id)!.status, 'failed');
        assert.equal(byUser.get(dave!.id)!.error, 'the user has no e-mail address');
        assert.equal(byUser.get(erin!.id)!.status, 'failed');
        assert.match(String(byUser.get(erin!.id)!.error), /550/);
        assert.match(String(byUser.get(alice!.id)!.response), /^250 .*queued as/);
        // Nothing new: no digest, no e-mail.
        clock.advance(3_600_000);
        assert.equal((await runReminders(svc.database, clock, { mail: true })).digests, 0);
        const again = new MailSender(svc.database, settingsFor(svc, sink), { clock });
        assert.deepEqual(await again.pass(), { attempted: 0, delivered: 0 });
        again.close();
        assert.equal(sink.messages.length, 2);

        // The unsubscribe link: GET changes nothing, a tampered token is not found, POST turns reminders off (audited).
        const link = /List-Unsubscribe:\s+<https:\/\/localhost:8443(\/unsubscribe\/[^>]+)>/.exec(mail.raw)![1]!;
        const anonymous = svc.client(null);
        const page = await anonymous.get(link);
        assert.equal(page.status, 200);
        assert.match(page.text, /<form method="post"><button type="submit">Unsubscribe<\/button><\/form>/);
        const remindersOf = async () => Number((await svc.database.db.selectFrom('users').select('reminders').where('id', '=', alice!.id).executeTakeFirst())!.reminders);
        assert.equal(await remindersOf(), 1);
        const tampered = link.slice(0, -1) + (link.endsWith('A') ? 'B' : 'A');
        assert.equal((await anonymous.get(tampered)).status, 404);
        assert.equal((await anonymous.post(tampered, '')).status, 404);
        assert.equal((await anonymous.post(link.replace(/\/\d+\./, `/${bob!.id}.`), '')).status, 404, 'another user\'s id with this signature');
        assert.equal(await remindersOf(), 1);
        const posted = await anonymous.request('POST', link, { body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
        assert.equal(posted.status, 200);
        assert.match(posted.text, /Unsubscribed/);
        assert.equal(await remindersOf(), 0);
        const audit = await svc.database.db.selectFrom('auditlog').selectAll().where('endpoint', '=', 'users').where('record_id', '=', alice!.id)
          .where('action', '=', 'update').where('message', 'like', '%unsubscribed%').execute();
        assert.equal(audit.length, 1);
        assert.deepEqual([Number(audit[0]!.user_id), audit[0]!.client_id, audit[0]!.ip], [alice!.id, null, '127.0.0.1']);
      } finally {
        await sink.close();
      }
    });

    it('SMTP down for a while: retried after 1 minute, then 2, and delivered once when it is back', async () => {
      const sink = await SmtpSink.start('starttls');
      await sink.close();
      try {
        const { id: co, api } = await tenant();
        const taker = await user(svc, co);
        await asset(api, { next_check: TODAY });
        const clock = new TestClock(NOON);
        assert.equal((await runReminders(svc.database, clock, { mail: true })).digests, 1);
        const sender = new MailSender(svc.database, settingsFor(svc, sink), { clock });
        assert.deepEqual(await sender.pass(), { attempted: 1, delivered: 0 });
        let [row] = await outboxOf(svc, co);
        assert.deepEqual([row!.status, row!.attempt, row!.next_attempt], ['retrying', 1, `${TODAY} 12:01:00`]);
        clock.advance(61_000);
        assert.deepEqual(await sender.pass(), { attempted: 1, delivered: 0 });
        [row] = await outboxOf(svc, co);
        assert.deepEqual([row!.attempt, row!.next_attempt], [2, `${TODAY} 12:03:01`]);
        await sink.listen();
        clock.advance(60_000);
        assert.deepEqual(await sender.pass(), { attempted: 0, delivered: 0 }, 'not before its time');
        clock.advance(60_000);
        assert.deepEqual(await sender.pass(), { attempted: 1, delivered: 1 });
        clock.advance(3_600_000);
        assert.deepEqual(await sender.pass(), { attempted: 0, delivered: 0 });
        sender.close();
        assert.equal(sink.to(`${taker.username}@example.com`).length, 1);
      } finally {
        await sink.close();
      }
    });

    it('a certificate the service does not trust: not sent, retried, and sent once the CA is trusted', async () => {
      const sink = await SmtpSink.start('starttls');
      try {
        const { id: co, api } = await tenant();
        await user(svc, co);
        await asset(api, { next_check: TODAY });
        const clock = new TestClock(NOON);
        await runReminders(svc.database, clock, { mail: true });
        const untrusting = new MailSender(svc.database, settingsFor(svc, sink, chained('other').caPem), { clock });
        assert.deepEqual(await untrusting.pass(), { attempted: 1, delivered: 0 });
        clock.advance(61_000);
        assert.deepEqual(await untrusting.pass(), { attempted: 1, delivered: 0 });
        untrusting.close();
        const [row] = await outboxOf(svc, co);
        assert.equal(row!.status, 'retrying');
        assert.match(String(row!.error), /certificate/i);
        assert.equal(sink.messages.length, 0);
        clock.advance(121_000);
        const trusting = new MailSender(svc.database, settingsFor(svc, sink), { clock });
        assert.deepEqual(await trusting.pass(), { attempted: 1, delivered: 1 });
        trusting.close();
        assert.equal(sink.messages.length, 1);
      } finally {
        await sink.close();
      }
    });
  });
}
