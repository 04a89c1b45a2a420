// The fuzz tests' own HTTP/1.1 client: every request is written byte for byte on
// a new TLS connection (so that the tests control the request line, repeated
// headers and bodies exactly), and the answer is read with a deadline. The
// outcome tells a complete response apart from a connection reset, a connection
// closed before the response was complete, and a hang.
import tls from 'node:tls';
import type { TestCert } from './certs.ts';

export interface WireRequest {
  readonly method: string;
  /** Leave out the Host line, or send it twice. */
  readonly host?: 'none' | 'twice';
  /** The request target as sent; characters stand for bytes (latin1). */
  readonly target: string;
  /** Header lines in order (repeats allowed); values are latin1. */
  readonly headers: readonly (readonly [string, string])[];
  /** The request line's version (default HTTP/1.1; `''`: none). */
  readonly version?: string;
  /** With a body, a Content-Length is sent; without one, none. */
  readonly body?: Buffer;
}

export function encodeRequest(r: WireRequest): Buffer {
  const host = r.host === 'none' ? [] : r.host === 'twice' ? ['Host: localhost', 'Host: example.com'] : ['Host: localhost'];
  const version = r.version ?? 'HTTP/1.1';
  const lines = [`${r.method} ${r.target}${version === '' ? '' : ` ${version}`}`, ...host, 'Connection: close',
    ...r.headers.map(([k, v]) => `${k}: ${v}`)];
  if (r.body !== undefined) lines.push(`Content-Length: ${r.body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), r.body ?? Buffer.alloc(0)]);
}

export interface WireResponse {
  readonly kind: 'response';
  readonly status: number;
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly body: Buffer;
  readonly text: string;
  readonly ms: number;
}

export type WireOutcome =
  | WireResponse
  | { readonly kind: 'reset'; readonly error: string; readonly received: string; readonly ms: number }
  | { readonly kind: 'closed'; readonly received: string; readonly ms: number }
  | { readonly kind: 'timeout'; readonly received: string; readonly ms: number };

/**
 * A complete response at the start of `buf` (interim 1xx responses skipped), or null while
 * more bytes are needed; `ended`: the peer closed; `head`: the answer to HEAD has no body.
 */
function parseResponse(all: Buffer, ended: boolean, head: boolean): Omit<WireResponse, 'ms' | 'kind'> | null {
  let buf = all;
  let split = buf.indexOf('\r\n\r\n');
  while (split >= 0 && /^HTTP\/1\.[01] 1\d\d/.test(buf.subarray(0, 12).toString('latin1'))) {
    buf = buf.subarray(split + 4);
    split = buf.indexOf('\r\n\r\n');
  }
  if (split < 0) return null;
  const [line = '', ...fields] = buf.subarray(0, split).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(line);
  if (!m) return null;
  const headers = new Map<string, string[]>();
  for (const f of fields) {
    const colon = f.indexOf(':');
    const name = f.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), f.slice(colon + 1).trim()]);
  }
  const rest = buf.subarray(split + 4);
  let body: Buffer | null = null;
  const length = headers.get('content-length');
  if (head) {
    body = Buffer.alloc(0);
  } else if ((headers.get('transfer-encoding') ?? []).some((v) => /chunked/i.test(v))) {
    const parts: Buffer[] = [];
    let i = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', i);
      if (eol < 0) break;
      const size = parseInt(rest.subarray(i, eol).toString('latin1'), 16);
      if (!Number.isFinite(size)) break;
      if (size === 0) { body = Buffer.concat(parts); break; }
      if (rest.length < eol + 2 + size + 2) break;
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      i = eol + 2 + size + 2;
    }
  } else if (length !== undefined) {
    const n = Number(length[0]);
    if (rest.length >= n) body = rest.subarray(0, n);
  } else if (ended) {
    body = rest;
  }
  if (body === null) return null;
  return { status: Number(m[1]), headers, body, text: body.toString('utf8') };
}

/**
 * Sends `bytes` on a new TLS connection presenting `cert` (or none) and waits for
 * one complete response, at most `timeoutMs`.
 */
export function exchange(port: number, cert: TestCert | null, bytes: Buffer, timeoutMs: number, head = false): Promise<WireOutcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const received = () => Buffer.concat(chunks).toString('latin1').slice(0, 2000);
    const finish = (o: WireOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost',
      ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) }, () => {
      // A server that answers early (413) and closes may make this write fail; what it answered still counts.
      socket.write(bytes, () => {});
      });
    const timer = setTimeout(() => finish({ kind: 'timeout', received: received(), ms: Date.now() - started }), timeoutMs);
    const attempt = (ended: boolean) => {
      const r = parseResponse(Buffer.concat(chunks), ended, head);
      if (r) finish({ kind: 'response', ...r, ms: Date.now() - started });
      return r !== null;
    };
    socket.on('data', (c: Buffer) => { chunks.push(c); attempt(false); });
    socket.on('end', () => { if (!attempt(true)) finish({ kind: 'closed', received: received(), ms: Date.now() - started }); });
    socket.on('close', () => { if (!attempt(true)) finish({ kind: 'closed', received: received(), ms: Date.now() - started }); });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (!attempt(true)) finish({ kind: 'reset', error: `${e.code ?? ''} ${e.message}`, received: received(), ms: Date.now() - started });
    });
  });
}

/** A request as readable text for failure reports: bytes outside printable ASCII escaped, long bodies cut. */
export function showRequest(bytes: Buffer, max = 3000): string {
  const text = bytes.toString('latin1');
  const shown = text.length > max ? `${text.slice(0, max)}… (${text.length} bytes in all)` : text;
  return JSON.stringify(shown);
}
