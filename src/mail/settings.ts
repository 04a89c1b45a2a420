// E-mail's settings (SMTP_URL, MAIL_FROM, SMTP_CA_FILE): checked when the
// configuration is read, so a service never starts with half of them.
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import addressparser from 'nodemailer/lib/addressparser';

export interface MailSettings {
  /** smtp://[user:password@]host[:port] (STARTTLS when offered) or smtps://… (TLS from the start). */
  readonly smtpUrl: string;
  /** The From header: an address, with a display name if wanted. */
  readonly from: string;
  /** An extra CA (PEM) trusted beside the system's for the SMTP server's certificate. */
  readonly ca: string | null;
  /** The API's public address: unsubscribe links. */
  readonly baseUrl: string;
  /** The portal's public address (links to each asset's page), null when the portal is off. */
  readonly portalBaseUrl: string | null;
  /** Connecting, the server's greeting, and silence on a connection each end an attempt after this long (SMTP_TIMEOUT). */
  readonly timeoutMs: number;
}

export interface MailInput {
  readonly smtpUrl: string | undefined;
  readonly from: string | undefined;
  readonly caFile: string | undefined;
  readonly baseUrl: string;
  readonly portalBaseUrl: string | null;
  readonly timeoutMs: number;
}

/** One address, no group and nothing else. */
export function singleAddress(text: string): string | null {
  if (/[\r\n]/.test(text)) return null;
  const list = addressparser(text, { flatten: true });
  const only = list.length === 1 ? list[0]! : null;
  return only && /^[^\s@]+@[^\s@]+$/.test(only.address) ? only.address : null;
}

/** The settings, or null when e-mail is off; what is wrong goes to `problems`. */
export function mailSettings(i: MailInput, problems: string[]): MailSettings | null {
  if (i.smtpUrl === undefined && i.from === undefined) {
    if (i.caFile !== undefined) problems.push('SMTP_CA_FILE is set but e-mail is off: set SMTP_URL and MAIL_FROM too');
    return null;
  }
  if (i.smtpUrl === undefined || i.from === undefined) {
    problems.push('SMTP_URL and MAIL_FROM must be set together (e-mail is on when both are set, off when neither is)');
    return null;
  }
  let url: URL | null = null;
  try {
    url = new URL(i.smtpUrl);
  } catch {
    // reported below
  }
  if (!url || !/^smtps?:$/.test(url.protocol) || !url.hostname || (url.pathname !== '' && url.pathname !== '/')) {
    problems.push('SMTP_URL must be smtp://[user:password@]host[:port] or smtps://… (user and password percent-encoded)');
  }
  if (singleAddress(i.from) === null) problems.push(`MAIL_FROM must be one e-mail address, with a display name if wanted (got "${i.from}")`);
  let ca: string | null = null;
  if (i.caFile !== undefined) {
    try {
      ca = readFileSync(i.caFile, 'utf8');
      new X509Certificate(ca);
    } catch {
      problems.push(`SMTP_CA_FILE must be a readable PEM certificate (got "${i.caFile}")`);
    }
  }
  return { smtpUrl: i.smtpUrl, from: i.from, ca, baseUrl: i.baseUrl, portalBaseUrl: i.portalBaseUrl, timeoutMs: i.timeoutMs };
}
