// An outbox row as the message to send: its recipient (the user's address as it is
// now), the letter (render.ts) and its headers and attachments. A row that cannot
// become a message — the user is gone, has no valid address, or no longer takes
// reminders — is a final failure: it is logged and skipped, and blocks no other.
import type { SendMailOptions } from 'nodemailer';
import type { Database } from '../db/database.ts';
import { digestRows } from './digest.ts';
import { type Letter, type Letterhead, LOGO_CID, logoOf, digestLetter, weeklyLetter } from './render.ts';
import type { MailSettings } from './settings.ts';
import { oneLine } from './transport.ts';
import { singleAddress } from './settings.ts';
import { unsubscribeUrl } from './unsubscribe.ts';
import { type WeeklyData, weeklyAttachments, weeklyRows } from './weekly.ts';

export interface OutboxRow {
  readonly id: number;
  readonly company_id: number;
  readonly user_id: number;
  readonly kind: string;
  readonly data: string | null;
  readonly attempt: number;
  readonly created: string;
}

export type Composed =
  | { readonly ok: true; readonly recipient: string; readonly message: SendMailOptions }
  | { readonly ok: false; readonly recipient: string | null; readonly error: string };

export async function compose(database: Database, s: MailSettings, row: OutboxRow): Promise<Composed> {
  const { db } = database;
  const user = await db.selectFrom('users').select(['email', 'first_name', 'last_name', 'reminders']).where('id', '=', row.user_id).executeTakeFirst();
  if (!user) return { ok: false, recipient: null, error: 'the user no longer exists' };
  const address = user.email.trim();
  if (!address) return { ok: false, recipient: null, error: 'the user has no e-mail address' };
  if (singleAddress(address) !== address) return { ok: false, recipient: oneLine(address).slice(0, 320), error: 'the user\'s e-mail address is not valid' };
  if (row.kind === 'digest' && Number(user.reminders) !== 1) return { ok: false, recipient: address, error: 'the user no longer takes reminders' };
  const company = await db.selectFrom('companies').select(['name', 'logo']).where('id', '=', row.company_id).executeTakeFirst();
  const head: Letterhead = { companyName: company?.name ?? '', logo: logoOf(company?.logo ?? null), portalBaseUrl: s.portalBaseUrl };
  const name = oneLine(`${user.first_name} ${user.last_name}`);
  let letter: Letter;
  const headers: Record<string, string> = {};
  const attachments: NonNullable<SendMailOptions['attachments']> = [];
  if (row.kind === 'digest') {
    const url = await unsubscribeUrl(database, s.baseUrl, row.user_id);
    letter = digestLetter(head, { userName: name, ...await digestRows(db, row.id), unsubscribeUrl: url });
    headers['List-Unsubscribe'] = `<${url}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  } else {
    const data = JSON.parse(row.data ?? '{}') as WeeklyData;
    letter = weeklyLetter(head, { week: data.week, today: data.today, ...await weeklyRows(db, row.company_id, data) });
    attachments.push(...await weeklyAttachments(database, row.company_id, data));
  }
  if (head.logo) attachments.push({ filename: 'logo', content: head.logo.bytes, contentType: head.logo.type, cid: LOGO_CID, contentDisposition: 'inline' });
  return {
    ok: true, recipient: address,
    message: {
      from: s.from, to: { name, address }, subject: letter.subject, text: letter.text, html: letter.html, headers, attachments,
      // One Message-ID per outbox row: a receiving server may recognise the rare duplicate.
      messageId: `<mail-${row.id}-${row.created.replace(/\D/g, '')}@${(singleAddress(s.from) ?? '@localhost').split('@')[1]}>`,
    },
  };
}
