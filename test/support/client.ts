// A small HTTPS client over real TLS with a client certificate (or none).
import { appendFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import type { Readable } from 'node:stream';
import tls from 'node:tls';
import { asEnvelope, asError, type Envelope, type ErrorReply } from './api.ts';
import type { TestCert } from './certs.ts';

export interface TestResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** The body's bytes as they came (a PDF). */
  readonly bytes: Buffer;
  /** The parsed body (throws when it is not JSON): its shape is what the test asserts. */
  readonly body: unknown;
  /** The body as the contract's envelope (asserted to have a `response`). */
  readonly envelope: Envelope;
  /** The envelope's `response` as an error reply (asserted to have a string `error`). */
  readonly errorReply: ErrorReply;
  /** The envelope's `response`, read as `R` (what its members are, the test asserts). */
  reply<R>(): R;
}

export interface RequestOptions {
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

/** Everything a stream yields until it ends. */
function collectBytes(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', reject);
    stream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/** Everything a stream yields until it ends, as text. */
const collect = async (stream: Readable) => (await collectBytes(stream)).toString('utf8');

/** A response of this status, headers and body text (parsed on demand). */
export function testResponse(status: number, headers: http.IncomingHttpHeaders, text: string, bytes?: Buffer): TestResponse {
  const parsed = (): unknown => JSON.parse(text);
  // The readings of the body are not enumerable: spreading or printing a response shows status, headers, text and body only.
  return Object.defineProperties({ status, headers, text, get body() { return parsed(); } }, {
    bytes: { get: () => bytes ?? Buffer.from(text, 'utf8') },
    envelope: { get: () => asEnvelope(parsed(), text) },
    errorReply: { get: () => asError(asEnvelope(parsed(), text).response, text) },
    reply: { value: <R>() => asEnvelope<R>(parsed(), text).response },
  }) as TestResponse;
}

/** The whole response, its body as text (parsed on demand). */
export async function readResponse(res: http.IncomingMessage): Promise<TestResponse> {
  const bytes = await collectBytes(res);
  return testResponse(res.statusCode ?? 0, res.headers, bytes.toString('utf8'), bytes);
}

/** The raw HTTP response a socket receives until the server closes it. */
export async function readUntilClosed(socket: Readable): Promise<TestResponse> {
  const all = await collect(socket);
  const split = all.indexOf('\r\n\r\n');
  const [line = '', ...fields] = all.slice(0, split).split('\r\n');
  const headers: http.IncomingHttpHeaders = {};
  for (const f of fields) headers[f.slice(0, f.indexOf(':')).toLowerCase()] = f.slice(f.indexOf(':') + 1).trim();
  return testResponse(Number(line.split(' ')[1]), headers, all.slice(split + 4));
}

/**
 * With API_RECORD=<file>, every answer is appended to that file as a JSON line,
 * so that test/http/openapi.test.ts (API_RECORDED=<file>) can check every answer
 * of the suite against the OpenAPI document. Large bodies are left out.
 */
const RECORD = process.env.API_RECORD;
const RECORD_MAX = 1024 * 1024;

function record(method: string, path: string, payload: string | Buffer | undefined, res: TestResponse): void {
  const json = String(res.headers['content-type'] ?? '').startsWith('application/json');
  const requestBody = payload !== undefined && payload.length <= RECORD_MAX ? payload.toString() : undefined;
  appendFileSync(RECORD!, `${JSON.stringify({ method, path, status: res.status, headers: res.headers, text: json ? res.text : '', requestBody })}\n`);
}

export class TestClient {
  private readonly agent: https.Agent;
  private readonly tls: tls.ConnectionOptions;
  constructor(private readonly port: number, ca: string, cert?: TestCert | null) {
    this.tls = { ca, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}), servername: 'localhost' };
    this.agent = new https.Agent({ keepAlive: true, ...this.tls });
  }

  /** Sends `text` as it is on a new TLS connection and reads until the server closes it. */
  raw(text: string): Promise<TestResponse> {
    const socket = tls.connect({ host: '127.0.0.1', port: this.port, ...this.tls }, () => socket.write(text));
    return readUntilClosed(socket);
  }

  request(method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> {
    const payload = o.body === undefined ? undefined
      : typeof o.body === 'string' || Buffer.isBuffer(o.body) ? o.body : JSON.stringify(o.body);
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: this.port, method, path, agent: this.agent, headers: o.headers ?? {} },
        (res) => void readResponse(res).then((r) => {
          if (RECORD) record(method, path, payload, r);
          resolve(r);
        }, reject));
      req.on('error', reject);
      if (payload !== undefined) req.end(payload);
      else req.end();
    });
  }

  get = (path: string, o?: RequestOptions) => this.request('GET', path, o);
  post = (path: string, body: unknown, o: RequestOptions = {}) => this.request('POST', path, { ...o, body });
  put = (path: string, body: unknown, o: RequestOptions = {}) => this.request('PUT', path, { ...o, body });
  delete = (path: string, o?: RequestOptions) => this.request('DELETE', path, o);

  close(): void { this.agent.destroy(); }
}
