// Where the client certificate comes from: the TLS handshake, or (only from a
// trusted proxy on the plain-HTTP listener) a request header (spec §2.3).
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { type CertificateIdentity, headerIdentity, socketIdentity } from './certificate.ts';

export interface Presented {
  /** The certificate, or null when none (or an unreadable one) was presented. */
  readonly identity: CertificateIdentity | null;
  /** The client's address for audit entries. */
  readonly ip: string | null;
}

export interface ProxySettings {
  readonly trusted: BlockList;
  /** Lower-case header name. */
  readonly header: string;
}

export function trustedList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

const unmapped = (ip: string) => (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

function isTrusted(proxy: ProxySettings, ip: string | undefined): boolean {
  if (!ip) return false;
  const plain = unmapped(ip);
  return proxy.trusted.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4');
}

export function presented(req: IncomingMessage, proxy: ProxySettings | null): Presented {
  const socket = req.socket as TLSSocket;
  const remote = req.socket.remoteAddress ? unmapped(req.socket.remoteAddress) : null;
  if (socket.encrypted) return { identity: socketIdentity(socket), ip: remote };
  if (!proxy || !isTrusted(proxy, remote ?? undefined)) return { identity: null, ip: remote };
  const values = req.headersDistinct[proxy.header] ?? [];
  const identity = values.length === 1 && values[0] !== '' ? headerIdentity(values[0]!) : null;
  return { identity, ip: forwardedFor(req, proxy) ?? remote };
}

/** The right-most X-Forwarded-For entry that is not one of our proxies. */
function forwardedFor(req: IncomingMessage, proxy: ProxySettings): string | null {
  const hops = (req.headersDistinct['x-forwarded-for'] ?? []).join(',').split(',').map((s) => s.trim()).filter((s) => isIP(s));
  for (let i = hops.length - 1; i >= 0; i--) if (!isTrusted(proxy, hops[i])) return unmapped(hops[i]!);
  return null;
}
