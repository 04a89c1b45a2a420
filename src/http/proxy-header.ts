// The PROXY protocol's header (versions 1 and 2, as HAProxy's proxy-protocol.txt
// defines them): what a balancer in TCP mode sends first on each connection to say
// whose connection it passes on. Pure: bytes in, a verdict out.
//
// A verdict is 'incomplete' only while the bytes so far are the start of a header
// that may still be valid; anything else that is not a whole valid header is
// 'invalid', so a caller never waits for bytes that could not help.
import ipaddr from 'ipaddr.js';

export interface ProxySource {
  /** The client's address in its plain form (an IPv4-mapped IPv6 address as IPv4). */
  readonly address: string;
  readonly port: number;
}

export interface ProxyHeader {
  readonly version: 1 | 2;
  /** Bytes the header takes; what follows is the client's own stream (TLS). */
  readonly length: number;
  /**
   * The client's address, or null when the header names none: a v2 LOCAL command
   * (the balancer's own connection, such as a health check), v1 UNKNOWN, or a family
   * without an IP address — the connection's own peer is then the one to use.
   */
  readonly source: ProxySource | null;
}

export type ProxyVerdict =
  | { readonly kind: 'incomplete' }
  | { readonly kind: 'invalid'; readonly reason: string }
  | { readonly kind: 'header'; readonly header: ProxyHeader };

const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
/** A v1 header is at most 107 bytes, its CRLF included. */
export const V1_MAX = 107;
export const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const V2_FIXED = 16;
/** The most a v2 header may take here, its TLVs included (the protocol allows 64 KiB; a balancer sends a few hundred bytes). */
export const V2_MAX = 4096;

const INCOMPLETE: ProxyVerdict = { kind: 'incomplete' };
const invalid = (reason: string): ProxyVerdict => ({ kind: 'invalid', reason });

/** Whether `data` starts like a header of either version (or is the start of one's signature): a TLS client never sends that. */
export function looksLikeProxyHeader(data: Buffer): boolean {
  const starts = (signature: Buffer) => data.subarray(0, signature.length).equals(signature.subarray(0, Math.min(data.length, signature.length)));
  return data.length > 0 && (starts(V1_PREFIX) || starts(V2_SIGNATURE));
}

export function parseProxyHeader(data: Buffer): ProxyVerdict {
  if (data.length === 0) return INCOMPLETE;
  const v2 = data.subarray(0, V2_SIGNATURE.length);
  if (v2.equals(V2_SIGNATURE.subarray(0, v2.length))) return data.length < V2_SIGNATURE.length ? INCOMPLETE : parseV2(data);
  const v1 = data.subarray(0, V1_PREFIX.length);
  if (v1.equals(V1_PREFIX.subarray(0, v1.length))) return data.length < V1_PREFIX.length ? INCOMPLETE : parseV1(data);
  return invalid('no PROXY protocol signature');
}

// ---------------------------------------------------------------------------------------------
// Version 1: one line of text, "PROXY TCP4|TCP6|UNKNOWN src dst sport dport\r\n".

const PORT = /^(0|[1-9]\d{0,4})$/;

function parseV1(data: Buffer): ProxyVerdict {
  const end = data.indexOf('\r\n', 0, 'latin1');
  const lineEnd = end < 0 ? Math.min(data.length, V1_MAX) : end;
  // Only printable ASCII and spaces may come before the CRLF (a lone CR at the very end may be its first half).
  for (let i = 0; i < lineEnd; i++) {
    const b = data[i]!;
    if (b === 0x0d && i === data.length - 1 && end < 0) break;
    if (b < 0x20 || b > 0x7e) return invalid('a v1 header holds a byte that is not printable ASCII');
  }
  if (end < 0) return data.length >= V1_MAX ? invalid(`a v1 header longer than ${V1_MAX} bytes`) : INCOMPLETE;
  if (end + 2 > V1_MAX) return invalid(`a v1 header longer than ${V1_MAX} bytes`);
  const fields = data.toString('latin1', V1_PREFIX.length, end).split(' ');
  const length = end + 2;
  // UNKNOWN: the balancer could not tell (or will not); whatever follows on the line is to be ignored.
  if (fields[0] === 'UNKNOWN') return { kind: 'header', header: { version: 1, length, source: null } };
  if (fields.length !== 5) return invalid('a v1 header has five fields after PROXY');
  const [family, source, destination, sourcePort, destinationPort] = fields as [string, string, string, string, string];
  const valid = family === 'TCP4' ? (a: string) => ipaddr.IPv4.isValidFourPartDecimal(a)
    : family === 'TCP6' ? (a: string) => !a.includes('%') && ipaddr.IPv6.isValid(a)
    : null;
  if (!valid) return invalid(`a v1 header's family is TCP4, TCP6 or UNKNOWN, not "${family}"`);
  if (!valid(source) || !valid(destination)) return invalid(`a v1 header's addresses are not ${family} addresses`);
  if (!PORT.test(sourcePort) || !PORT.test(destinationPort) || Number(sourcePort) > 65535 || Number(destinationPort) > 65535) {
    return invalid('a v1 header\'s ports are decimal numbers from 0 to 65535');
  }
  return { kind: 'header', header: { version: 1, length, source: { address: plain(ipaddr.parse(source)), port: Number(sourcePort) } } };
}

// ---------------------------------------------------------------------------------------------
// Version 2: binary — the signature, version and command, family and transport, the length of
// what follows, the addresses, then TLVs (skipped).

const LOCAL = 0x0;
const PROXY = 0x1;
const AF_INET = 0x1;
const AF_INET6 = 0x2;
const AF_UNIX = 0x3;
/** Bytes of the addresses and ports of each family that carries them. */
const ADDRESS_BYTES: Readonly<Record<number, number>> = { [AF_INET]: 12, [AF_INET6]: 36, [AF_UNIX]: 216 };

function parseV2(data: Buffer): ProxyVerdict {
  const versionCommand = data[12];
  if (versionCommand === undefined) return INCOMPLETE;
  if (versionCommand >> 4 !== 2) return invalid('a v2 header\'s version is 2');
  const command = versionCommand & 0x0f;
  if (command !== LOCAL && command !== PROXY) return invalid('a v2 header\'s command is LOCAL or PROXY');
  const familyTransport = data[13];
  if (familyTransport === undefined) return INCOMPLETE;
  const family = familyTransport >> 4;
  const transport = familyTransport & 0x0f;
  if (family > AF_UNIX || transport > 2) return invalid('a v2 header\'s family or transport is unknown');
  if (data.length < V2_FIXED) return INCOMPLETE;
  const length = V2_FIXED + data.readUInt16BE(14);
  if (length > V2_MAX) return invalid(`a v2 header longer than ${V2_MAX} bytes`);
  const needed = ADDRESS_BYTES[family] ?? 0;
  if (command === PROXY && length - V2_FIXED < needed) return invalid('a v2 header too short for its addresses');
  if (data.length < length) return INCOMPLETE;
  // LOCAL: the balancer's own connection (its health checks); the addresses, if any, are to be ignored.
  if (command === LOCAL || (family !== AF_INET && family !== AF_INET6)) return { kind: 'header', header: { version: 2, length, source: null } };
  const size = family === AF_INET ? 4 : 16;
  const bytes = [...data.subarray(V2_FIXED, V2_FIXED + size)];
  const port = data.readUInt16BE(V2_FIXED + 2 * size);
  return { kind: 'header', header: { version: 2, length, source: { address: plain(ipaddr.fromByteArray(bytes)), port } } };
}

function plain(ip: ipaddr.IPv4 | ipaddr.IPv6): string {
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address().toString() : ip.toString();
}
