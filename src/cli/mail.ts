// asset-tracker mail test|log and reports weekly: e-mail as the operator sees it.
import { loadConfig } from '../config.ts';
import { AdminError } from '../errors.ts';
import { deliveredOf, MailSender, recentMail } from '../mail/outbox.ts';
import type { MailSettings } from '../mail/settings.ts';
import { singleAddress } from '../mail/settings.ts';
import { sendMessage, smtpTransport } from '../mail/transport.ts';
import { queueWeekly } from '../mail/weekly.ts';
import { systemClock } from '../model/dates.ts';
import { type Command, output, positiveInt, requiredString, UsageError } from './command.ts';
import { withDatabase } from './database.ts';

function mailOn(): MailSettings {
  const { mail } = loadConfig();
  if (!mail) throw new AdminError('e-mail is off: set SMTP_URL and MAIL_FROM');
  return mail;
}

export const mailTest: Command = {
  words: ['mail', 'test'],
  usage: 'mail test --to ADDRESS [--json]',
  summary: 'Sends a test e-mail through SMTP_URL from MAIL_FROM and prints the SMTP server\'s answer (exit 1 when it refused or failed).',
  options: { to: { type: 'string' } },
  async run(args) {
    const to = requiredString(args, 'to', this.usage);
    if (singleAddress(to) !== to) throw new UsageError(`--to must be one e-mail address (got "${to}")`);
    const mail = mailOn();
    const mailer = smtpTransport(mail);
    try {
      const outcome = await sendMessage(mailer, { from: mail.from, to, subject: 'asset-tracker: test e-mail',
        text: 'This is a test e-mail from asset-tracker. E-mail is set up: reminder digests and weekly due lists can be sent.\n' });
      if (outcome.ok) output(args, `sent: the server answered "${outcome.response}"`, { sent: true, response: outcome.response });
      else {
        output(args, `not sent: ${outcome.error}`, { sent: false, error: outcome.error });
        process.exitCode = 1;
      }
    } finally {
      mailer.close();
    }
  },
};

export const mailLog: Command = {
  words: ['mail', 'log'],
  usage: 'mail log [--limit N] [--json]',
  summary: 'The e-mails most recently sent, failed or waiting, newest first (default 50): to whom, the server\'s answer or the error.',
  options: { limit: { type: 'string' } },
  async run(args) {
    const limit = args.values.limit === undefined ? 50 : positiveInt(args.values.limit, '--limit');
    const rows = await withDatabase((d) => recentMail(d, limit));
    const line = (r: (typeof rows)[number]) => `${r.modified}  #${r.id} ${r.kind.padEnd(6)} ${r.status.padEnd(9)} company ${r.company_id} user ${r.user_id}`
      + ` ${r.recipient ?? '-'}  attempt ${r.attempt}${r.next_attempt && r.status === 'retrying' ? `, next ${r.next_attempt}` : ''}`
      + `  ${r.response ?? r.error ?? ''}`;
    output(args, rows.length === 0 ? 'no e-mail yet' : rows.map(line).join('\n'), rows);
  },
};

export const reportsWeekly: Command = {
  words: ['reports', 'weekly'],
  usage: 'reports weekly --company ID [--json]',
  summary: 'Sends the company\'s weekly due list to its admin users now, for this ISO week, unless this week\'s was sent\n'
    + 'already (once per week, whoever sends it).',
  options: { company: { type: 'string' } },
  async run(args) {
    const company = positiveInt(requiredString(args, 'company', this.usage), '--company');
    const mail = mailOn();
    const r = await withDatabase(async (d) => {
      const exists = await d.db.selectFrom('companies').select('id').where('id', '=', company).executeTakeFirst();
      if (!exists) throw new AdminError(`no company ${company}`);
      const q = await queueWeekly(d, company, systemClock);
      if (q.queued === null || q.queued.length === 0) return { week: q.week, queued: q.queued?.length ?? null, delivered: 0 };
      const sender = new MailSender(d, mail);
      try {
        await sender.pass(() => false, q.queued);
        // A running instance's mail job may have taken some first: what they sent counts too.
        return { week: q.week, queued: q.queued.length, delivered: await deliveredOf(d, q.queued, mail.timeoutMs + 5000) };
      } finally {
        sender.close();
      }
    });
    const human = r.queued === null ? `the weekly list of week ${r.week} was sent already`
      : r.queued === 0 ? `week ${r.week}: the company has no admin user to send it to`
        : `week ${r.week}: sent to ${r.delivered} of ${r.queued} admin users${r.delivered < r.queued ? ' (the rest is retried by a running instance; see mail log)' : ''}`;
    output(args, human, r);
  },
};
