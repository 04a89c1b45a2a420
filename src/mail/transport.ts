// Sending one message over SMTP (nodemailer). smtp:// upgrades with STARTTLS when the
// server offers it, smtps:// speaks TLS from the start; the server's certificate is
// always checked, against the system's CAs and SMTP_CA_FILE's. An attempt that fails
// says whether a retry could mend it: a server that refuses the recipient (5xx to
// RCPT TO) will refuse it again; a server down, busy or with a bad certificate may
// not be later.
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type { MailSettings } from './settings.ts';

export type SendOutcome =
  | { readonly ok: true; readonly response: string }
  | { readonly ok: false; readonly error: string; readonly final: boolean };

export type Mailer = Transporter;

export function smtpTransport(s: Pick<MailSettings, 'smtpUrl' | 'ca' | 'timeoutMs'>): Mailer {
  const timeoutMs = s.timeoutMs;
  const url = new URL(s.smtpUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return nodemailer.createTransport({
    host, port: url.port ? Number(url.port) : undefined, secure: url.protocol === 'smtps:',
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    tls: { rejectUnauthorized: true, ...(isIP(host) ? {} : { servername: host }), ...(s.ca ? { ca: [...rootCertificates, s.ca] } : {}) },
    connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs,
    // Messages are built here from the store: nothing in one may make the sender read a file or a URL.
    disableFileAccess: true, disableUrlAccess: true,
  });
}

interface SmtpError { message?: string; responseCode?: number; command?: string; code?: string }

/** Sends `message`; the server's answer, or why not and whether to try again. */
export async function sendMessage(mailer: Mailer, message: SendMailOptions): Promise<SendOutcome> {
  try {
    const info = await mailer.sendMail(message) as { response?: string };
    return { ok: true, response: String(info.response ?? '') };
  } catch (e) {
    const err = e as SmtpError;
    const refused = err.code === 'EENVELOPE' || /RCPT/i.test(err.command ?? '');
    const final = refused && (err.responseCode ?? 0) >= 500;
    return { ok: false, error: String(err.message ?? e).replace(/\s+/g, ' ').slice(0, 1000), final };
  }
}

/** A header's text on one line: no CR, LF or other control character can start a header of its own. */
export const oneLine = (text: string): string => text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();
