// Requests Node's HTTP parser refuses before any handler runs. A request line
// refused only for its method (a verb Node does not know, or one not in upper case,
// `get` and `dElEtE` too: methods are case-sensitive) still goes through the
// pipeline's checks (401 → 404 → 405); anything else is answered with the
// error body (too_long), as there is no request to echo.
// A request line of another HTTP version than 1.0 or 1.1 is malformed too.
import { type IncomingMessage, type RequestListener, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { parserRefusal } from './early-answer.ts';
import type { ApiResult } from './pipeline.ts';

/** Answers a request that never reached the router; for these requests it always ends in an error. */
export type UnroutedAnswer = (req: IncomingMessage) => Promise<ApiResult>;

const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.[01]$/;

function rawResponse(status: number, headers: Readonly<Record<string, string>>, body: string): string {
  const lines = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${lines.join('')}\r\n${body}`;
}

const MALFORMED = JSON.stringify({ response: { error: 'Malformed HTTP request', code: 'malformed_request' } });

/** Requests of HTTP/1.0 and 1.1 only: Node's parser also passes 2.0, and 0.9 (a request line without a version). */
export function http1Only(handler: RequestListener): RequestListener {
  return (req, res) => {
    if (req.httpVersionMajor === 1) {
      handler(req, res);
      return;
    }
    res.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(MALFORMED), connection: 'close' })
      .end(MALFORMED);
  };
}

/** The parser's own refusals: an overlong request line or header block, a request whose headers
 * did not all arrive within HEADERS_TIMEOUT, or a malformed request. */
function parserError(code: unknown, raw: string): string {
  const overflow = code === 'HPE_HEADER_OVERFLOW';
  // The parser keeps only the last chunk it read: a first line ending in the HTTP
  // version is the tail of the request line, and a chunk that starts a request and
  // has no line end is the line still going; either way the line was too long.
  const lineEnd = raw.indexOf('\r\n');
  const lineOnly = overflow && (lineEnd >= 0 ? / HTTP\/\d\.\d$/.test(raw.slice(0, lineEnd)) : /^[A-Za-z]+ \//.test(raw));
  const [status, error, message] = overflow
    ? lineOnly ? [414, 'too_long', 'Request line too long'] : [431, 'too_long', 'Request headers too large']
    : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'request_timeout', 'Request not received in time']
    : [400, null, null];
  const body = error === null ? MALFORMED : JSON.stringify({ response: { error: message, code: error } });
  return rawResponse(status, { 'content-type': 'application/json; charset=utf-8' }, body);
}

/** The request as far as the pipeline's first checks need it: method, raw target, headers and socket. */
function unroutedRequest(raw: string, socket: Socket): IncomingMessage | null {
  const head = raw.split('\r\n\r\n', 1)[0]!.split('\r\n');
  const line = REQUEST_LINE.exec(head[0]!);
  if (!line) return null;
  const headers: Record<string, string> = {};
  const headersDistinct: Record<string, string[]> = {};
  for (const h of head.slice(1)) {
    const colon = h.indexOf(':');
    if (colon <= 0) continue;
    const name = h.slice(0, colon).trim().toLowerCase();
    (headersDistinct[name] ??= []).push(h.slice(colon + 1).trim());
    headers[name] = headersDistinct[name].join(', ');
  }
  // The pipeline reads nothing else before it refuses the verb.
  return { method: line[1], url: line[2], headers, headersDistinct, socket } as unknown as IncomingMessage;
}

/** CONNECT reaches no request handler in Node: the pipeline's checks answer it on the raw socket. */
export function connectHandler(answer: UnroutedAnswer): (req: IncomingMessage, socket: Socket) => void {
  return (req, socket) => {
    answer(req).then(
      (r) => (typeof r.body === 'string' ? socket.end(rawResponse(r.status, r.headers, r.body)) : socket.destroy()),
      () => socket.destroy(),
    );
  };
}

export function clientErrorHandler(answer: UnroutedAnswer): (err: Error, socket: Socket) => void {
  return (err, socket) => {
    if (socket.destroyed) return;
    const { code, rawPacket } = err as { code?: unknown; rawPacket?: unknown };
    // The parser reports every later chunk as the same error: after the answer they are
    // only bytes to drop, and the connection lingers so that the answer is not reset.
    const refuse = parserRefusal(socket, Buffer.isBuffer(rawPacket) ? rawPacket.length : 0);
    if (!refuse) return;
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const raw = Buffer.isBuffer(rawPacket) ? rawPacket.toString('latin1') : '';
    const req = code === 'HPE_INVALID_METHOD' ? unroutedRequest(raw, socket) : null;
    if (!req) {
      refuse(parserError(code, raw));
      return;
    }
    answer(req).then(
      (r) => (typeof r.body === 'string' ? refuse(rawResponse(r.status, r.headers, r.body)) : socket.destroy()),
      () => socket.destroy(),
    );
  };
}
