// Who the client is behind TLS-terminating proxies: the address that
// reached us is a trusted proxy's; X-Forwarded-For is walked from the right, each
// entry being the address the hop to its right saw, until an address we do not
// trust — the client. Entries may carry a port ("1.2.3.4:80", "[2001:db8::1]:443");
// a malformed entry ends the walk at the hop that wrote it, so no entry a client
// could have written itself (anything left of it) is ever taken.
import proxyaddr from '@fastify/proxy-addr';
import ipaddr from 'ipaddr.js';

export type Trust = (address: string) => boolean;

/** Trusted proxies from addresses and CIDRs (the names proxy-addr knows, such as `loopback`, too). */
export function trustOf(entries: readonly string[]): Trust {
  const trusted = proxyaddr.compile([...entries]);
  return (address) => trusted(address, 0);
}

const PORTED_V4 = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/;
const BRACKETED = /^\[([^\]]+)\](?::(\d{1,5}))?$/;

/** An address in its plain form (an IPv4-mapped IPv6 address as IPv4), or null when it is none. */
export function plainAddress(text: string): string | null {
  const s = text.trim();
  const ported = BRACKETED.exec(s) ?? PORTED_V4.exec(s);
  if (ported?.[2] !== undefined && Number(ported[2]) > 65535) return null;
  const host = ported?.[1] ?? s;
  // Only the usual forms: "0x7f.1" or "2130706433" are no addresses here.
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return ipaddr.IPv4.parse(host).toString();
  if (!ipaddr.IPv6.isValid(host) || host.includes('%')) return null;
  const v6 = ipaddr.IPv6.parse(host);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : v6.toString();
}

/** The client's address, given the address that connected to us and the X-Forwarded-For header lines in order. */
export function clientAddress(peer: string, forwardedFor: readonly string[], trust: Trust): string {
  const entries = forwardedFor.join(',').split(',');
  let hop = peer;
  for (let i = entries.length - 1; i >= 0 && trust(hop); i--) {
    const next = plainAddress(entries[i]!);
    if (next === null) break;
    hop = next;
  }
  return hop;
}
