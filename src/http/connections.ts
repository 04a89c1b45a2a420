// Connection hygiene: a connection costs a file descriptor before it costs any
// work, so idle ones must not pile up. A TLS handshake must end within its timeout
// (a TCP connection that never starts one included); no client address may hold
// more than its share of connections, and the listener none beyond its total —
// over either, a new connection is closed at once, before any TLS work. What was
// closed is counted, and reported to the log at most once per interval.
import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import type { Trust } from '../auth/forwarded.ts';
import { connectionAddress } from '../auth/peer.ts';

export interface ConnectionLimits {
  /** A TLS handshake not finished this long after the connection opened ends it. */
  readonly handshakeTimeoutMs: number;
  /** A request whose headers have not all arrived this long after it began is answered 408 and closed (Node's headersTimeout). */
  readonly headersTimeoutMs: number;
  /** Open connections per listener. */
  readonly maxConnections: number;
  /** Open connections per client address (trusted proxies are exempt). */
  readonly maxPerAddress: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  handshakeTimeoutMs: 10_000, headersTimeoutMs: 10_000, maxConnections: 10_000, maxPerAddress: 1_000,
};

/** Queue of connections the kernel has completed but the process not yet taken (capped by net.core.somaxconn):
 * Node's 511 lets a burst of connections wait for seconds in SYN-ACK retries before it is even seen. */
export const LISTEN_BACKLOG = 4096;

/** Options of Node's HTTP(S) servers for these limits (its timeouts are checked every second). */
export const serverTimeouts = (l: ConnectionLimits) =>
  ({ headersTimeout: l.headersTimeoutMs, requestTimeout: Math.max(300_000, l.headersTimeoutMs), connectionsCheckingInterval: 1_000 });

export interface ConnectionCounts { handshakeTimeouts: number; overTotal: number; overAddress: number }

/** Applies the limits to a listener; `exempt` addresses (trusted proxies) have no per-address cap. */
export function guardConnections(server: HttpServer, limits: ConnectionLimits, exempt: Trust | null,
  report: (counts: ConnectionCounts) => void, reportEveryMs = 10_000): ConnectionCounts {
  const counts: ConnectionCounts = { handshakeTimeouts: 0, overTotal: 0, overAddress: 0 };
  const perAddress = new Map<string, number>();
  let open = 0;
  let reported = { ...counts };
  const timer = setInterval(() => {
    if (counts.handshakeTimeouts === reported.handshakeTimeouts && counts.overTotal === reported.overTotal
      && counts.overAddress === reported.overAddress) return;
    report({ ...counts });
    reported = { ...counts };
  }, reportEveryMs);
  timer.unref();
  server.once('close', () => clearInterval(timer));
  const tls = 'setSecureContext' in server;
  // Connections whose handshake is still due, by peer address and port (unique while open).
  const handshaking = new Map<string, NodeJS.Timeout>();
  const peer = (s: Socket) => `${s.remoteAddress}|${s.remotePort}`;
  if (tls) {
    (server as unknown as TlsServer).on('secureConnection', (s: TLSSocket) => {
      const key = peer(s);
      clearTimeout(handshaking.get(key));
      handshaking.delete(key);
    });
  }

  server.on('connection', (socket: Socket) => {
    // The client's, when a PROXY header gave it (http/proxy-listener.ts): clients behind a balancer are capped each on their own.
    const address = connectionAddress(socket) ?? 'unknown';
    const mine = (perAddress.get(address) ?? 0) + 1;
    const capped = !exempt?.(address);
    if (open >= limits.maxConnections || (capped && mine > limits.maxPerAddress)) {
      if (open >= limits.maxConnections) counts.overTotal++;
      else counts.overAddress++;
      socket.destroy();
      return;
    }
    open++;
    perAddress.set(address, mine);
    const key = peer(socket);
    if (tls) {
      const deadline = setTimeout(() => { counts.handshakeTimeouts++; socket.destroy(); }, limits.handshakeTimeoutMs);
      deadline.unref();
      handshaking.set(key, deadline);
    }
    socket.once('close', () => {
      open--;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
      clearTimeout(handshaking.get(key));
      handshaking.delete(key);
    });
  });
  return counts;
}
