// The weekly due list by e-mail: sent to the company's own admin users at the first
// reminder run at or after Monday 07:00 in its time zone, once per ISO week (also
// when two instances run at once, and when the operator asks again), listing its
// scope's overdue and due assets with the same rows as CSV attached. The transport's
// three ways of speaking to a server: STARTTLS, plain, TLS from the start.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runReminders } from '../../src/jobs/reminders.ts';
import { MailSender } from '../../src/mail/outbox.ts';
import type { MailSettings } from '../../src/mail/settings.ts';
import { sendMessage, smtpTransport } from '../../src/mail/transport.ts';
import { queueWeekly, queueWeeklyReports } from '../../src/mail/weekly.ts';
import { DB_KINDS, type Service, TestClock } from '../support/harness.ts';
import { pdfLines } from '../support/pdf-text.ts';
import { SmtpSink, type SmtpTls } from '../support/smtp.ts';
import { uniqueName, user } from '../support/workflows.ts';
import { create, expectOk, start, stop } from '../http/resources-support.ts';
import type { Updated } from '../support/api.ts';

/** Monday 2031-01-06 (ISO week 2031-W02) in New York (UTC−5 in January). */
const at = (localDay: string, localTime: string) => Date.parse(`${localDay}T${localTime}-05:00`);

const settingsFor = (svc: Service, sink: SmtpSink): MailSettings => ({
  smtpUrl: sink.url(), from: 'tracker@example.com', ca: sink.cert.caPem, baseUrl: svc.baseUrl, portalBaseUrl: null, timeoutMs: 5000,
});

for (const kind of DB_KINDS) {
  describe(`weekly due list by e-mail (${kind})`, () => {
    let svc: Service;
    let sink: SmtpSink;
    before(async () => { svc = await start(kind); sink = await SmtpSink.start('starttls'); });
    after(async () => { await sink.close(); await stop(svc); });

    it('Monday 07:00 company time, once per week, to its own admins, the due assets in the CSV', async () => {
      const co = await svc.company(uniqueName('Weekly'));
      const child = await svc.company(uniqueName('Branch'), co);
      const api = (await svc.certificate(co)).client;
      const data = { weekly_report: true, timezone: 'America/New_York', reminder_days: 14 };
      assert.equal(expectOk<Updated>(await api.post(`/3.0/companies/id=${co}`, { data })).records_updated, 1);
      const admins = [await user(svc, co, { level: 'admin', reminders: 0 }), await user(svc, co, { level: 'admin' })];
      await user(svc, co, { level: 'user' });
      await user(svc, child, { level: 'admin' });
      const numbered = async (body: object) => {
        const assetNo = uniqueName('W');
        await create(api, 'assets', { asset_no: assetNo, description: 'scale', ...body });
        return assetNo;
      };
      const listed = [
        await numbered({ next_check: '2030-12-01' }),
        await numbered({ next_check: '2031-01-20', company_id: child }),
        await numbered({ next_check: '2031-01-06', status: 'Active' }),
      ];
      const unlisted = [await numbered({ next_check: '2031-01-21' }), await numbered({ next_check: '2030-12-01', status: 'Disposed' }), await numbered({})];

      const clock = new TestClock(at('2031-01-06', '06:59:00'));
      const run = () => runReminders(svc.database, clock, { mail: true });
      const deliver = async () => {
        const sender = new MailSender(svc.database, settingsFor(svc, sink), { clock });
        await sender.pass();
        sender.close();
      };
      const weeklies = () => sink.messages.filter((m) => m.mail.subject?.startsWith('Weekly due list'));
      assert.equal((await run()).weekly, 0, 'not before 07:00 on Monday');
      clock.set(new Date(at('2031-01-06', '07:00:00')));
      // Two instances at once: the week is queued once.
      const other = svc.reopen();
      try {
        const both = await Promise.all([queueWeeklyReports(svc.database, clock), queueWeeklyReports(other, clock)]);
        assert.equal(both[0] + both[1], 1);
      } finally {
        await other.close();
      }
      assert.equal((await run()).weekly, 0);
      await deliver();
      assert.deepEqual(weeklies().map((m) => m.to[0]).sort(), admins.map((a) => `${a.username}@example.com`).sort());
      const mail = weeklies()[0]!;
      assert.match(mail.mail.subject ?? '', /^Weekly due list 2031-W02: 3 assets — /);
      for (const no of listed) assert.ok(mail.mail.text?.includes(no), no);
      const csv = mail.mail.attachments.find((a) => a.filename === 'due-list-2031-W02.csv');
      assert.ok(csv, 'the CSV is attached');
      const lines = csv.content.toString('utf8').trim().split('\r\n');
      assert.match(lines[0]!, /^id,/);
      assert.equal(lines.length, 1 + listed.length);
      for (const no of listed) assert.equal(lines.filter((l) => l.includes(`,${no},`)).length, 1, no);
      for (const no of unlisted) assert.ok(!csv.content.toString('utf8').includes(no), no);
      // The same rows printed: the list's heading names the filter, each due asset is one row, none other is there.
      const pdf = mail.mail.attachments.find((a) => a.filename === 'due-list-2031-W02.pdf');
      assert.ok(pdf, 'the PDF is attached');
      assert.equal(pdf.contentType, 'application/pdf');
      const text = (await pdfLines(pdf.content)).flat();
      assert.ok(text.some((l) => l.includes('next_check-2031-')), 'the filter is printed');
      for (const no of listed) assert.equal(text.filter((l) => l.startsWith(`${no} |`)).length, 1, no);
      for (const no of unlisted) assert.ok(!text.some((l) => l.includes(no)), no);

      // Later that week: nothing more, nor when the operator asks.
      clock.set(new Date(at('2031-01-08', '09:00:00')));
      assert.equal((await run()).weekly, 0);
      assert.equal((await queueWeekly(svc.database, co, clock)).queued, null);
      await deliver();
      assert.equal(weeklies().length, 2);
      // The next Monday, at 07:00 and not before.
      clock.set(new Date(at('2031-01-13', '06:30:00')));
      assert.equal((await run()).weekly, 0);
      clock.set(new Date(at('2031-01-13', '07:05:00')));
      assert.equal((await run()).weekly, 1);
      await deliver();
      assert.equal(weeklies().length, 4);
      assert.match(weeklies()[3]!.mail.subject ?? '', /^Weekly due list 2031-W03/);
    });
  });
}

describe('the SMTP transport', () => {
  for (const tls of ['starttls', 'none', 'implicit'] as const satisfies readonly SmtpTls[]) {
    it(`${tls === 'implicit' ? 'smtps:// (TLS from the start)' : tls === 'none' ? 'smtp:// to a server without STARTTLS' : 'smtp:// upgraded with STARTTLS'}`, async () => {
      const sink = await SmtpSink.start(tls);
      try {
        const mailer = smtpTransport({ smtpUrl: sink.url(), ca: sink.cert.caPem, timeoutMs: 5000 });
        const outcome = await sendMessage(mailer, { from: 'tracker@example.com', to: 'ops@example.com', subject: 'hi', text: 'hello' });
        mailer.close();
        assert.ok(outcome.ok, JSON.stringify(outcome));
        assert.equal(sink.messages.length, 1);
        assert.equal(sink.messages[0]!.secure, tls !== 'none');
      } finally {
        await sink.close();
      }
    });
  }
});
