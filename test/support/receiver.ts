// A webhook receiver for tests: a real HTTPS server on 127.0.0.1 with a certificate
// of its own, which records every delivery and answers what the test tells it to.
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { createSelfSigned } from '../../src/tls/x509.ts';
import type { WebhookEvent } from './api.ts';

export interface Delivery { readonly path: string; readonly headers: IncomingHttpHeaders; readonly body: string; readonly at: number; readonly json: WebhookEvent }

/** What to answer: a status (and headers), or 'hang' (never answer). */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

export class Receiver {
  readonly deliveries: Delivery[] = [];
  /** Answers for the next deliveries to a path, in order; afterwards 200. */
  private readonly answers = new Map<string, Answer[]>();
  readonly certPem: string;
  private readonly server: https.Server;
  port = 0;

  private constructor() {
    const cert = createSelfSigned({ cn: 'localhost', altNames: ['localhost', '127.0.0.1'] });
    this.certPem = cert.certPem;
    this.server = https.createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        this.deliveries.push({ path, headers: req.headers, body, at: Date.now(), json: JSON.parse(body) as WebhookEvent });
        const answer = this.answers.get(path)?.shift() ?? { status: 200 };
        if (answer === 'hang') return;
        res.writeHead(answer.status, answer.headers ?? {}).end('ok');
      });
    });
  }

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    await new Promise<void>((done) => r.server.listen(0, '127.0.0.1', () => done()));
    r.port = (r.server.address() as { port: number }).port;
    return r;
  }

  /** The next deliveries to `path` get these answers. */
  answer(path: string, ...answers: Answer[]): void {
    this.answers.set(path, [...(this.answers.get(path) ?? []), ...answers]);
  }

  url(path = '/hook'): string { return `https://localhost:${this.port}${path}`; }

  /** Deliveries of `event` (optionally about one record). */
  of(event: string, recordId?: number): Delivery[] {
    return this.deliveries.filter((d) => d.json.event === event && (recordId === undefined || d.json.data?.id === recordId));
  }

  /** Waits until `test` holds over the deliveries. */
  async until(test: (d: readonly Delivery[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test(this.deliveries)) {
      if (Date.now() > deadline) throw new Error(`deliveries did not arrive in time: ${this.deliveries.map((d) => d.json.event).join(', ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
