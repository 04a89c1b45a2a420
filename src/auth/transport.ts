// Where the client certificate comes from: the TLS handshake, or (only from a
// trusted proxy on the plain-HTTP listener) a request header.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { type CertificateIdentity, headerIdentity, socketIdentity } from './certificate.ts';
import { clientAddress, type Trust } from './forwarded.ts';
import { connectionAddress } from './peer.ts';

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

export function presented(req: IncomingMessage, proxy: ProxySettings | null): Presented {
  const socket = req.socket as TLSSocket;
  const remote = connectionAddress(req.socket);
  if (socket.encrypted) return { identity: socketIdentity(socket), ip: remote };
  if (!proxy || remote === null || !proxy.trusted(remote)) return { identity: null, ip: remote };
  const values = req.headersDistinct[proxy.header] ?? [];
  const identity = values.length === 1 && values[0] !== '' ? headerIdentity(values[0]!) : null;
  return { identity, ip: clientAddress(remote, req.headersDistinct['x-forwarded-for'] ?? [], proxy.trusted) };
}
