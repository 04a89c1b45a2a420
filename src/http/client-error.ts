// Requests Node's HTTP parser refuses before any handler runs (spec §5.2
// too_long): answered with the error body, since there is no request to echo.
import type { Socket } from 'node:net';

const REASONS: Readonly<Record<number, string>> = { 400: 'Bad Request', 414: 'URI Too Long', 431: 'Request Header Fields Too Large' };

export function answerClientError(err: Error, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const { code: parserCode, rawPacket } = err as { code?: unknown; rawPacket?: unknown };
  const overflow = parserCode === 'HPE_HEADER_OVERFLOW';
  // The parser keeps only the last chunk it read: a first line ending in the HTTP
  // version is the tail of the request line, so the line itself was too long.
  const raw = Buffer.isBuffer(rawPacket) ? rawPacket.toString('latin1') : '';
  const lineEnd = raw.indexOf('\r\n');
  const lineOnly = overflow && lineEnd >= 0 && / HTTP\/\d\.\d$/.test(raw.slice(0, lineEnd));
  const [status, code, message] = overflow
    ? lineOnly ? [414, 'too_long', 'Request line too long'] : [431, 'too_long', 'Request headers too large']
    : [400, 'malformed_request', 'Malformed HTTP request'];
  const body = JSON.stringify({ response: { error: message, code } });
  socket.end(`HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json; charset=utf-8\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
