// A client that sends a request body the way a careless one does: as fast as the
// socket takes it, not reading the answer until it has written everything (or the
// server has stopped reading), so that a server which answers early and then
// closes while bytes are still arriving resets the connection under it. Over TLS
// (the HTTPS listener) or plain TCP (the trusted-proxy listener), each request on
// a new connection, HTTP/1.1 keep-alive as far as the client is concerned.
import net from 'node:net';
import tls from 'node:tls';
import type { TestCert } from './certs.ts';

export type Framing = 'length' | 'chunked';
/**
 * `none`: no Expect header. `wait`: `Expect: 100-continue`, and the body only after a
 * `100 Continue` (a final answer instead ends the request). `eager`: the header, and
 * the body at once without waiting (RFC 9110 allows it).
 */
export type ExpectMode = 'none' | 'wait' | 'eager';

export interface Transport {
  readonly port: number;
  /** TLS with this client certificate; `null`: plain TCP. */
  readonly cert: TestCert | null;
}

export interface BodyRequest {
  readonly method: string;
  readonly path: string;
  /** Extra header lines (e.g. the proxy's certificate header). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The body: `head`, then filler bytes up to `size`. */
  readonly head?: Buffer;
  readonly size: number;
  readonly framing: Framing;
  readonly expect: ExpectMode;
}

export interface Answer {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly text: string;
}

export type Outcome =
  | { readonly kind: 'response'; readonly interim: readonly number[]; readonly answer: Answer; readonly written: number; readonly stalled: boolean }
  | { readonly kind: 'reset' | 'closed' | 'timeout'; readonly error: string; readonly received: string; readonly written: number };

/** A write that the server has not taken for this long means it stopped reading. */
const STALL_MS = 400;
const CHUNK = 64 * 1024;

function requestHead(r: BodyRequest): string {
  const lines = [`${r.method} ${r.path} HTTP/1.1`, 'Host: localhost', 'Connection: keep-alive', 'Content-Type: application/json'];
  for (const [k, v] of Object.entries(r.headers ?? {})) lines.push(`${k}: ${v}`);
  lines.push(r.framing === 'length' ? `Content-Length: ${r.size}` : 'Transfer-Encoding: chunked');
  if (r.expect !== 'none') lines.push('Expect: 100-continue');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The body as it goes on the wire, in pieces of at most CHUNK bytes. */
function* wireBody(r: BodyRequest): Generator<Buffer> {
  const filler = Buffer.alloc(CHUNK, 0x20);
  let left = r.size;
  let first = r.head ?? Buffer.alloc(0);
  while (left > 0) {
    const n = Math.min(CHUNK, left);
    let piece = first.length > 0 ? Buffer.concat([first, filler]).subarray(0, n) : filler.subarray(0, n);
    first = first.subarray(Math.min(first.length, n));
    left -= n;
    if (r.framing === 'chunked') piece = Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
    yield piece;
  }
  if (r.framing === 'chunked') yield Buffer.from('0\r\n\r\n');
}

/** Responses at the start of `all`: interim 1xx ones and the final one once complete (by Content-Length). */
export function parseAnswers(all: Buffer): { interim: number[]; final: Answer | null; headSeen: boolean } {
  const interim: number[] = [];
  let buf = all;
  for (;;) {
    const split = buf.indexOf('\r\n\r\n');
    if (split < 0) return { interim, final: null, headSeen: false };
    const [line = '', ...fields] = buf.subarray(0, split).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(line)?.[1] ?? NaN);
    if (status >= 100 && status < 200) {
      interim.push(status);
      buf = buf.subarray(split + 4);
      continue;
    }
    const headers = new Map<string, string>();
    for (const f of fields) headers.set(f.slice(0, f.indexOf(':')).trim().toLowerCase(), f.slice(f.indexOf(':') + 1).trim());
    const length = Number(headers.get('content-length') ?? NaN);
    const rest = buf.subarray(split + 4);
    if (!(rest.length >= length)) return { interim, final: null, headSeen: true };
    return { interim, final: { status, headers, text: rest.subarray(0, length).toString('utf8') }, headSeen: true };
  }
}

/**
 * Sends the request on a new connection and reads the answer; resolves with what
 * happened, never rejects. The client reads nothing while it writes the body (the
 * answer waits in the kernel's buffer) until all is written or no write has been
 * taken for STALL_MS.
 */
export function sendBody(t: Transport, r: BodyRequest, timeoutMs = 15_000): Promise<Outcome> {
  return send(t, requestHead(r), wireBody(r), r.expect === 'wait', timeoutMs);
}

/**
 * Writes `head`, then (after a `100 Continue` when `waitForContinue`) the pieces of
 * `rest` as fast as the socket takes them, on a new connection.
 */
export function send(t: Transport, head: string, rest: Iterable<Buffer>, waitForContinue: boolean, timeoutMs = 15_000): Promise<Outcome> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let written = 0;
    let stalled = false;
    let reading = false;
    let settled = false;
    const socket: net.Socket = t.cert
      ? tls.connect({ host: '127.0.0.1', port: t.port, rejectUnauthorized: false, servername: 'localhost', cert: t.cert.certPem, key: t.cert.keyPem })
      : net.connect(t.port, '127.0.0.1');
    const timer = setTimeout(() => fail('timeout', 'no complete answer in time'), timeoutMs);
    const text = () => Buffer.concat(received).toString('latin1').slice(0, 500);
    const settle = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const fail = (kind: 'reset' | 'closed' | 'timeout', error: string) => {
      // A complete answer already received counts, whatever came after it.
      const { interim, final } = parseAnswers(Buffer.concat(received));
      if (final) settle({ kind: 'response', interim, answer: final, written, stalled });
      else settle({ kind, error, received: text(), written });
    };
    const check = () => {
      const { interim, final } = parseAnswers(Buffer.concat(received));
      if (final) settle({ kind: 'response', interim, answer: final, written, stalled });
    };
    socket.on('data', (d: Buffer) => {
      received.push(d);
      if (reading) check();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => fail(e.code === 'ECONNRESET' || e.code === 'EPIPE' ? 'reset' : 'closed', e.code ?? e.message));
    socket.on('end', () => { if (reading) fail('closed', 'closed before a complete answer'); });
    socket.on('close', () => fail('closed', 'closed before a complete answer'));

    const read = () => {
      reading = true;
      socket.resume();
      check();
    };
    /** Resolves true when the socket took the buffered bytes, false when it did not within STALL_MS. */
    const drained = () => new Promise<boolean>((res) => {
      const stall = setTimeout(() => { socket.off('drain', ok); res(false); }, STALL_MS);
      function ok() { clearTimeout(stall); res(true); }
      socket.once('drain', ok);
    });
    /** Waits for the first response head (Expect: 100-continue), with the socket reading. */
    const firstHead = () => new Promise<number[] | null>((res) => {
      const look = () => {
        const all = Buffer.concat(received);
        const { interim, headSeen } = parseAnswers(all);
        if (headSeen) { socket.off('data', look); res(null); } else if (interim.length > 0) { socket.off('data', look); res(interim); }
      };
      socket.on('data', look);
      look();
    });

    const start = async () => {
      if (head) socket.write(head);
      if (waitForContinue) {
        socket.resume();
        const interim = await firstHead();
        if (!interim) { read(); return; } // a final answer instead of 100 Continue: no body
      }
      // Not reading while writing: what the server answers waits in the kernel.
      socket.pause();
      for (const piece of rest) {
        if (settled || socket.destroyed) return;
        written += piece.length;
        if (!socket.write(piece) && !(await drained())) {
          stalled = true;
          break;
        }
      }
      read();
    };
    socket.once(t.cert ? 'secureConnect' : 'connect', () => void start());
  });
}
