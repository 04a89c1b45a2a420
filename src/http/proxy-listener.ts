// The PROXY protocol on the API's listener (PROXY_PROTOCOL_FROM): a connection
// from a listed balancer must begin with a PROXY header (v1 or v2), read on the raw
// TCP socket before TLS begins; its source address becomes the connection's client
// address (auth/peer.ts) for audit entries, the login throttle and the per-address
// connection limit. A connection from any other address that begins with a PROXY
// header is refused — a client must not name its own address — and so is one from a
// balancer whose header is missing, malformed, too long or late.
//
// The server's own 'connection' event is held back until the header is read: every
// listener of it (TLS, the connection limits, the metrics) then sees the socket with
// the header consumed and the client's address known, and the server itself goes on
// counting, tracking and closing its connections as usual.
import type { Server } from 'node:net';
import type { Socket } from 'node:net';
import { plainAddress, type Trust } from '../auth/forwarded.ts';
import { giveAddress } from '../auth/peer.ts';
import { looksLikeProxyHeader, parseProxyHeader } from './proxy-header.ts';

export interface ProxyProtocolOptions {
  /** Addresses whose connections begin with a PROXY header. */
  readonly from: Trust;
  /** The header (or, from elsewhere, the first bytes) must have arrived this long after the connection opened. */
  readonly timeoutMs: number;
  /** A connection was refused (its peer's address, and why). */
  readonly onRefused: (address: string, reason: string) => void;
}

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

export function readProxyHeaders(server: Server, o: ProxyProtocolOptions): void {
  const emit: Emit = server.emit.bind(server);
  const intercepted: Emit = (event, ...args) => {
    if (event !== 'connection') return emit(event, ...args);
    readHeader(args[0] as Socket, o, () => emit('connection', args[0]));
    return true;
  };
  server.emit = intercepted as typeof server.emit;
}

function readHeader(socket: Socket, o: ProxyProtocolOptions, handOver: () => void): void {
  const peer = plainAddress(socket.remoteAddress ?? '') ?? 'unknown';
  const expected = o.from(peer);
  let buffered: Buffer = Buffer.alloc(0);
  // Errors before TLS owns the socket end it quietly (a reset while the header is awaited is no failure of ours).
  const quiet = () => {};
  const done = () => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('error', quiet);
    socket.off('close', done);
  };
  const refuse = (reason: string) => {
    done();
    socket.destroy();
    o.onRefused(peer, reason);
  };
  const pass = (rest: Buffer, address: string | null) => {
    done();
    if (address !== null) giveAddress(socket, address);
    // What came after the header is the client's TLS: the socket is handed over paused with it put back.
    socket.pause();
    if (rest.length > 0) socket.unshift(rest);
    handOver();
  };
  const onData = (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    if (!expected) {
      if (looksLikeProxyHeader(buffered)) refuse('a PROXY header from an address not in PROXY_PROTOCOL_FROM');
      else pass(buffered, null);
      return;
    }
    const verdict = parseProxyHeader(buffered);
    if (verdict.kind === 'invalid') refuse(verdict.reason);
    else if (verdict.kind === 'header') pass(buffered.subarray(verdict.header.length), verdict.header.source?.address ?? null);
  };
  const timer = setTimeout(() => refuse(expected ? 'no PROXY header in time' : 'nothing sent in time'), o.timeoutMs);
  timer.unref();
  socket.on('error', quiet);
  socket.on('close', done);
  socket.on('data', onData);
}
