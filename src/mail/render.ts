// The text of the e-mails: a plain-text part and an HTML part of the same rows.
// Everything that comes from the store is escaped in the HTML (names, descriptions,
// locations, links); headers are built from it one line at a time (transport.ts).
import { oneLine } from './transport.ts';

export interface DueRow {
  readonly assetId: number;
  readonly assetNo: string;
  readonly description: string;
  readonly location: string | null;
  readonly nextCheck: string;
  readonly overdue: boolean;
}

export interface Letterhead {
  readonly companyName: string;
  /** The company's logo, shown in the HTML part as an inline image. */
  readonly logo: { readonly type: string; readonly bytes: Buffer } | null;
  readonly portalBaseUrl: string | null;
}

export interface Letter { readonly subject: string; readonly text: string; readonly html: string }

/** The inline logo's content id. */
export const LOGO_CID = 'logo@asset-tracker';
const LOGO = /^data:(image\/(?:png|jpeg));base64,([A-Za-z0-9+/]+=*)$/;

/** A stored logo (a data URL of a PNG or JPEG) as bytes; anything else is no logo. */
export function logoOf(stored: string | null): Letterhead['logo'] {
  const m = stored ? LOGO.exec(stored) : null;
  return m ? { type: m[1]!, bytes: Buffer.from(m[2]!, 'base64') } : null;
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const word = (r: DueRow) => (r.overdue ? 'Overdue' : 'Due');
const linkOf = (h: Letterhead, r: DueRow) => (h.portalBaseUrl ? `${h.portalBaseUrl}/assets/${r.assetId}` : null);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

function textRows(h: Letterhead, rows: readonly DueRow[], more: number): string {
  const lines = rows.map((r) => {
    const link = linkOf(h, r);
    return `- ${word(r)} ${r.nextCheck}  ${oneLine(r.assetNo)}  ${oneLine(r.description)}${r.location ? `  (${oneLine(r.location)})` : ''}`
      + (link ? `\n  ${link}` : '');
  });
  if (more > 0) lines.push(`… and ${plural(more, 'more asset')}${h.portalBaseUrl ? ` (see ${h.portalBaseUrl}/assets)` : ''}`);
  return lines.join('\n');
}

function htmlRows(h: Letterhead, rows: readonly DueRow[], more: number): string {
  const cell = (s: string) => `<td style="padding:4px 8px;border-bottom:1px solid #ddd">${s}</td>`;
  const body = rows.map((r) => {
    const link = linkOf(h, r);
    const no = link ? `<a href="${escapeHtml(link)}">${escapeHtml(r.assetNo)}</a>` : escapeHtml(r.assetNo);
    return `<tr>${[no, escapeHtml(r.description), escapeHtml(r.location ?? ''), escapeHtml(r.nextCheck),
      r.overdue ? '<strong style="color:#b00020">Overdue</strong>' : 'Due'].map(cell).join('')}</tr>`;
  }).join('\n');
  const head = ['Asset no', 'Description', 'Location', 'Next check', ''].map((t) => `<th style="text-align:left;padding:4px 8px">${t}</th>`).join('');
  const tail = more > 0 ? `<p>… and ${plural(more, 'more asset')}.</p>` : '';
  return `<table style="border-collapse:collapse"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>${tail}`;
}

function page(h: Letterhead, title: string, inner: string): string {
  const logo = h.logo ? `<img src="cid:${LOGO_CID}" alt="" style="max-height:48px"><br>` : '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>`
    + `<body style="font-family:sans-serif">${logo}<h1 style="font-size:18px">${escapeHtml(h.companyName)}</h1>${inner}</body></html>`;
}

/** A user's reminder digest: the assets whose reminders came due for them in a run. */
export function digestLetter(h: Letterhead, o: { userName: string; rows: readonly DueRow[]; more: number; unsubscribeUrl: string }): Letter {
  const total = o.rows.length + o.more;
  const subject = oneLine(`${plural(total, 'asset')} due for a check — ${h.companyName}`);
  const hello = o.userName ? `Hello ${oneLine(o.userName)},` : 'Hello,';
  const text = `${hello}\n\nthese assets of ${oneLine(h.companyName)} came due for a check:\n\n${textRows(h, o.rows, o.more)}\n\n`
    + `You get this e-mail because you take reminders. To stop them: ${o.unsubscribeUrl}\n`;
  const html = page(h, subject, `<p>${escapeHtml(hello)}</p><p>These assets came due for a check:</p>${htmlRows(h, o.rows, o.more)}`
    + `<p style="color:#555;font-size:12px">You get this e-mail because you take reminders. `
    + `<a href="${escapeHtml(o.unsubscribeUrl)}">Stop these e-mails</a>.</p>`);
  return { subject, text, html };
}

/** A company's weekly due list: its scope's assets overdue or due within its reminder window. */
export function weeklyLetter(h: Letterhead, o: { week: string; today: string; rows: readonly DueRow[]; more: number }): Letter {
  const total = o.rows.length + o.more;
  const subject = oneLine(`Weekly due list ${o.week}: ${plural(total, 'asset')} — ${h.companyName}`);
  const intro = `The assets of ${oneLine(h.companyName)} that are overdue or due within the reminder window, on ${o.today}`
    + ' (the attachments hold every row):';
  const text = `${intro}\n\n${total === 0 ? 'None.' : textRows(h, o.rows, o.more)}\n`;
  const html = page(h, subject, `<p>${escapeHtml(intro)}</p>${total === 0 ? '<p>None.</p>' : htmlRows(h, o.rows, o.more)}`);
  return { subject, text, html };
}
