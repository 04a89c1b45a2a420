// A real SMTP server for tests (smtp-server) on 127.0.0.1: plain, with STARTTLS, or
// TLS from the start, with a certificate issued by a throw-away test CA. It records
// every message it accepts (parsed with mailparser, and raw), refuses the recipients
// it is told to, and can hold a message's DATA until told to answer.
import { type AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { chained } from './certs.ts';
import assert from 'node:assert/strict';

export interface Received { readonly from: string; readonly to: readonly string[]; readonly raw: string; readonly mail: ParsedMail; readonly secure: boolean }

export type SmtpTls = 'starttls' | 'none' | 'implicit';

/** A test CA and a certificate it issued for localhost and 127.0.0.1. */
export const smtpCert = () => chained('localhost', ['localhost', '127.0.0.1']);

export class SmtpSink {
  readonly messages: Received[] = [];
  /** Recipients answered 550 at RCPT TO. */
  readonly refuse = new Set<string>();
  /** While set, DATA is read but not answered (a server that hangs, or a process killed meanwhile). */
  hold = false;
  /** Messages whose DATA the server has read (answered or not). */
  dataRead = 0;
  private server: SMTPServer | null = null;
  port = 0;

  constructor(readonly tls: SmtpTls, readonly cert = smtpCert()) {}

  static async start(tls: SmtpTls = 'starttls', cert = smtpCert(), port = 0): Promise<SmtpSink> {
    const sink = new SmtpSink(tls, cert);
    await sink.listen(port);
    return sink;
  }

  /** smtp:// (or smtps://) to 127.0.0.1 and this server's port. */
  url(user?: string, password?: string): string {
    const auth = user ? `${encodeURIComponent(user)}:${encodeURIComponent(password ?? '')}@` : '';
    return `${this.tls === 'implicit' ? 'smtps' : 'smtp'}://${auth}127.0.0.1:${this.port}`;
  }

  async listen(port = this.port): Promise<void> {
    const server = new SMTPServer({
      secure: this.tls === 'implicit', key: this.cert.keyPem, cert: this.cert.leafPem,
      disabledCommands: this.tls === 'none' ? ['STARTTLS', 'AUTH'] : ['AUTH'], authOptional: true, logger: false,
      onRcptTo: (address, _session, cb) => {
        if (this.refuse.has(address.address)) cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
        else cb();
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          this.dataRead++;
          const raw = Buffer.concat(chunks).toString('utf8');
          const answer = async () => {
            while (this.hold) await new Promise((r) => setTimeout(r, 50));
            const mail = await simpleParser(raw);
            const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
            this.messages.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw, mail, secure: session.secure });
            cb(null, `queued as ${this.messages.length}`);
          };
          void answer();
        });
      },
    });
    server.on('error', () => {});
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening (the port stays this sink's for a later listen()). */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.hold = false;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  to(address: string): Received[] { return this.messages.filter((m) => m.to.includes(address)); }

  async until(pred: (messages: readonly Received[]) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.messages)) {
      if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms; ${this.messages.length} messages: ${this.messages.map((m) => m.to.join(',')).join('; ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
