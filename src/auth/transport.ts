// Where the client certificate comes from: the TLS handshake, or (only from a
// trusted proxy on the plain-HTTP listener) a request header (spec §2.3).
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { type CertificateIdentity, headerIdentity, socketIdentity } from './certificate.ts';
import { clientAddress, plainAddress, type Trust } from './forwarded.ts';

export interface Presented {
  /** The certificate, or null when none (or an unreadable one) was presented. */
  readonly identity: CertificateIdentity | null;
  /** The client's address for audit entries. */
  readonly ip: string | null;
}

export interface ProxySettings {
  readonly trusted: Trust;
  /** Lower-case header name. */
  readonly header: string;
}

/** The peer's plain address, worked out once per connection (keep-alive connections carry many requests). */
const peers = new WeakMap<Socket, string | null>();
function peerOf(socket: Socket): string | null {
  let remote = peers.get(socket);
  if (remote === undefined) peers.set(socket, (remote = socket.remoteAddress ? plainAddress(socket.remoteAddress) : null));
  return remote;
}

export function presented(req: IncomingMessage, proxy: ProxySettings | null): Presented {
  const socket = req.socket as TLSSocket;
  const remote = peerOf(req.socket);
  if (socket.encrypted) return { identity: socketIdentity(socket), ip: remote };
  if (!proxy || remote === null || !proxy.trusted(remote)) return { identity: null, ip: remote };
  const values = req.headersDistinct[proxy.header] ?? [];
  const identity = values.length === 1 && values[0] !== '' ? headerIdentity(values[0]!) : null;
  return { identity, ip: clientAddress(remote, req.headersDistinct['x-forwarded-for'] ?? [], proxy.trusted) };
}
