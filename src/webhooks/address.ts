// Where a webhook may be delivered: only to public unicast addresses.
// Loopback, private, link-local, unique-local, carrier-grade NAT, multicast,
// broadcast, unspecified and reserved ranges are refused, and so is an IPv6 form
// that carries an IPv4 address (IPv4-mapped and -translated, NAT64, 6to4, Teredo)
// unless every address it carries is public. Ranges come from ipaddr.js.
import ipaddr from 'ipaddr.js';

/** The IPv4 addresses an IPv6 address carries in its transition form, or null when it carries none. */
function carried(v6: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const b = v6.toByteArray();
  const v4 = (at: number, invert = false) => new ipaddr.IPv4(b.slice(at, at + 4).map((x) => (invert ? ~x & 0xff : x)));
  switch (v6.range()) {
    case 'ipv4Mapped': case 'rfc6145': case 'rfc6052': return [v4(12)];
    case '6to4': return [v4(2)];
    // Teredo: the server's address, then the client's, stored inverted.
    case 'teredo': return [v4(4), v4(12, true)];
    default: return null;
  }
}

/** Why `address` may not receive deliveries (its range), or null when it may. */
export function refusal(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const inner = carried(ip as ipaddr.IPv6);
    if (inner) {
      const bad = inner.map((v4) => refusal(v4.toString())).find((r) => r !== null);
      return bad ? `${(ip as ipaddr.IPv6).range()} form of a ${bad} address` : null;
    }
  }
  const range = ip.range();
  return range === 'unicast' ? null : range;
}
