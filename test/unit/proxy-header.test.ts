// The PROXY protocol's header, both versions: what a balancer sends is read exactly
// (the client's address and port, the header's length, nothing of what follows);
// truncated headers wait for more, and everything else — too long, malformed, an
// unknown version, command or family — is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { looksLikeProxyHeader, parseProxyHeader, type ProxyVerdict, V1_MAX, V2_MAX, V2_SIGNATURE } from '../../src/http/proxy-header.ts';

const TLS_HELLO = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]);
const text = (s: string) => Buffer.from(s, 'latin1');

/** A v2 header: command (0 LOCAL, 1 PROXY), family and transport, the address block and TLVs as given. */
function v2(command: number, familyTransport: number, block: readonly number[] = [], version = 2): Buffer {
  const head = Buffer.alloc(16);
  V2_SIGNATURE.copy(head);
  head[12] = (version << 4) | command;
  head[13] = familyTransport;
  head.writeUInt16BE(block.length, 14);
  return Buffer.concat([head, Buffer.from(block)]);
}

const port = (n: number) => [n >> 8, n & 0xff];
const inet = (src: string, dst: string, sport: number, dport: number) =>
  [...ipaddr.parse(src).toByteArray(), ...ipaddr.parse(dst).toByteArray(), ...port(sport), ...port(dport)];
/** A TLV (type, length, value) as a balancer may append (e.g. PP2_TYPE_ALPN, 0x01). */
const tlv = (type: number, value: readonly number[]) => [type, ...port(value.length), ...value];

function header(v: ProxyVerdict) {
  assert.equal(v.kind, 'header', JSON.stringify(v));
  return (v).header;
}
function reason(v: ProxyVerdict): string {
  assert.equal(v.kind, 'invalid', JSON.stringify(v));
  return (v).reason;
}
const plain = (a: string) => {
  const ip = ipaddr.parse(a);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address().toString() : ip.toString();
};

describe('PROXY protocol v1', () => {
  it('reads TCP4 and TCP6 headers: the source address and port, and where the header ends', () => {
    const line = 'PROXY TCP4 192.0.2.10 198.51.100.2 51234 8443\r\n';
    assert.deepEqual(header(parseProxyHeader(Buffer.concat([text(line), TLS_HELLO]))),
      { version: 1, length: line.length, source: { address: '192.0.2.10', port: 51234 } });
    assert.deepEqual(header(parseProxyHeader(text('PROXY TCP6 2001:db8::1 2001:db8::2 0 65535\r\n'))).source,
      { address: '2001:db8::1', port: 0 });
    // An IPv4-mapped IPv6 address is the IPv4 address, as the service writes every address.
    assert.deepEqual(header(parseProxyHeader(text('PROXY TCP6 ::ffff:192.0.2.7 ::1 40000 443\r\n'))).source,
      { address: '192.0.2.7', port: 40000 });
  });

  it('takes UNKNOWN as no address, whatever follows it on the line', () => {
    assert.deepEqual(header(parseProxyHeader(text('PROXY UNKNOWN\r\n'))), { version: 1, length: 15, source: null });
    const line = 'PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n';
    assert.deepEqual(header(parseProxyHeader(text(line))), { version: 1, length: line.length, source: null });
  });

  it('waits while the bytes so far may still become a header', () => {
    const line = text('PROXY TCP4 192.0.2.10 198.51.100.2 51234 8443\r\n');
    for (let n = 1; n < line.length; n++) assert.deepEqual(parseProxyHeader(line.subarray(0, n)), { kind: 'incomplete' }, `${n} bytes`);
  });

  it(`refuses a line longer than ${V1_MAX} bytes, with or without its CRLF`, () => {
    assert.match(reason(parseProxyHeader(text(`PROXY UNKNOWN ${'x'.repeat(V1_MAX)}`))), /longer than 107 bytes/);
    assert.match(reason(parseProxyHeader(text(`PROXY UNKNOWN ${'x'.repeat(V1_MAX - 15)}\r\n`))), /longer than 107 bytes/);
    const longest = `PROXY UNKNOWN ${'x'.repeat(V1_MAX - 16)}\r\n`;
    assert.equal(longest.length, V1_MAX);
    assert.equal(header(parseProxyHeader(text(longest))).length, V1_MAX);
  });

  it('refuses malformed lines', () => {
    const refused: Record<string, string> = {
      'PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n': 'family',
      'PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n': 'five fields',
      'PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n': 'five fields',
      'PROXY  TCP4 1.2.3.4 5.6.7.8 1 2\r\n': 'five fields',
      'PROXY TCP4 2001:db8::1 5.6.7.8 1 2\r\n': 'addresses',
      'PROXY TCP6 1.2.3.4 ::1 1 2\r\n': 'addresses',
      'PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n': 'addresses',
      'PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n': 'addresses',
      'PROXY TCP4 0x7f.1 5.6.7.8 1 2\r\n': 'addresses',
      'PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n': 'ports',
      'PROXY TCP4 1.2.3.4 5.6.7.8 080 2\r\n': 'ports',
      'PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n': 'ports',
      'PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\r\n': 'printable',
      'PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n': 'printable',
      'PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n': 'printable',
      'proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n': 'signature',
    };
    for (const [line, why] of Object.entries(refused)) assert.match(reason(parseProxyHeader(text(line))), new RegExp(why), JSON.stringify(line));
  });
});

describe('PROXY protocol v2', () => {
  it('reads PROXY over IPv4 and IPv6, skipping the TLVs after the addresses', () => {
    const block = [...inet('192.0.2.10', '198.51.100.2', 51234, 8443), ...tlv(0x01, [0x68, 0x32]), ...tlv(0x04, [])];
    const bytes = v2(0x1, 0x11, block);
    assert.deepEqual(header(parseProxyHeader(Buffer.concat([bytes, TLS_HELLO]))),
      { version: 2, length: bytes.length, source: { address: '192.0.2.10', port: 51234 } });
    assert.deepEqual(header(parseProxyHeader(v2(0x1, 0x21, inet('2001:db8::1', '2001:db8::2', 1, 2)))).source, { address: '2001:db8::1', port: 1 });
    assert.deepEqual(header(parseProxyHeader(v2(0x1, 0x21, inet('::ffff:192.0.2.7', '::1', 3, 4)))).source, { address: '192.0.2.7', port: 3 });
  });

  it('takes LOCAL (the balancer\'s own health check) and families without an IP address as no address', () => {
    assert.deepEqual(header(parseProxyHeader(v2(0x0, 0x00))), { version: 2, length: 16, source: null });
    assert.equal(header(parseProxyHeader(v2(0x0, 0x11, inet('192.0.2.10', '198.51.100.2', 1, 2)))).source, null);
    assert.equal(header(parseProxyHeader(v2(0x0, 0x11, [1, 2]))).source, null, 'LOCAL with a short block: the addresses are not read');
    assert.equal(header(parseProxyHeader(v2(0x1, 0x00))).source, null, 'PROXY over UNSPEC');
    assert.equal(header(parseProxyHeader(v2(0x1, 0x31, new Array<number>(216).fill(0x2f)))).source, null, 'PROXY over UNIX');
  });

  it('waits while the bytes so far may still become a header', () => {
    const bytes = v2(0x1, 0x21, [...inet('2001:db8::1', '2001:db8::2', 1, 2), ...tlv(0x02, [0x61, 0x62])]);
    for (let n = 1; n < bytes.length; n++) assert.deepEqual(parseProxyHeader(bytes.subarray(0, n)), { kind: 'incomplete' }, `${n} bytes`);
  });

  it(`refuses a header longer than ${V2_MAX} bytes as soon as its length is read`, () => {
    const head = v2(0x1, 0x11).subarray(0, 16);
    head.writeUInt16BE(V2_MAX - 15, 14);
    assert.match(reason(parseProxyHeader(head)), /longer than 4096 bytes/);
    head.writeUInt16BE(V2_MAX - 16, 14);
    assert.deepEqual(parseProxyHeader(head), { kind: 'incomplete' });
    head.writeUInt16BE(0xffff, 14);
    assert.match(reason(parseProxyHeader(head)), /longer than/);
  });

  it('refuses another version, command, family or transport, and addresses cut short', () => {
    assert.match(reason(parseProxyHeader(v2(0x1, 0x11, inet('1.2.3.4', '5.6.7.8', 1, 2), 1))), /version is 2/);
    assert.match(reason(parseProxyHeader(v2(0x1, 0x11, inet('1.2.3.4', '5.6.7.8', 1, 2), 3))), /version is 2/);
    assert.match(reason(parseProxyHeader(v2(0x2, 0x11, inet('1.2.3.4', '5.6.7.8', 1, 2)))), /LOCAL or PROXY/);
    assert.match(reason(parseProxyHeader(v2(0x1, 0x41, inet('1.2.3.4', '5.6.7.8', 1, 2)))), /family or transport/);
    assert.match(reason(parseProxyHeader(v2(0x1, 0x13, inet('1.2.3.4', '5.6.7.8', 1, 2)))), /family or transport/);
    assert.match(reason(parseProxyHeader(v2(0x1, 0x11, [1, 2, 3, 4, 5, 6, 7, 8, 0, 1]))), /too short/);
    assert.match(reason(parseProxyHeader(v2(0x1, 0x21, inet('1.2.3.4', '5.6.7.8', 1, 2)))), /too short/);
    // The signature's first bytes, then something else.
    assert.match(reason(parseProxyHeader(Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0b]))), /signature/);
  });
});

describe('PROXY protocol: telling it from TLS', () => {
  it('a TLS ClientHello does not look like a header; a header, or the start of one, does', () => {
    assert.equal(looksLikeProxyHeader(TLS_HELLO), false);
    assert.equal(looksLikeProxyHeader(text('GET / HTTP/1.1\r\n')), false);
    assert.equal(looksLikeProxyHeader(Buffer.alloc(0)), false);
    for (const start of ['P', 'PROX', 'PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n']) assert.equal(looksLikeProxyHeader(text(start)), true, start);
    assert.equal(looksLikeProxyHeader(V2_SIGNATURE.subarray(0, 1)), true);
    assert.equal(looksLikeProxyHeader(v2(0x1, 0x11, inet('1.2.3.4', '5.6.7.8', 1, 2))), true);
  });
});

describe('PROXY protocol: properties', () => {
  const address = fc.oneof(fc.ipV4().map((a) => ({ family: 4 as const, a })), fc.ipV6().map((a) => ({ family: 6 as const, a })));
  const portNumber = fc.integer({ min: 0, max: 65535 });
  const after = fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b));

  it('any address and port, in either version, is read back with the exact length of its header', () => {
    fc.assert(fc.property(address, address, portNumber, portNumber, after, fc.boolean(), (src, dst, sport, dport, rest, second) => {
      fc.pre(src.family === dst.family);
      const bytes = second
        ? v2(0x1, src.family === 4 ? 0x11 : 0x21, inet(src.a, dst.a, sport, dport))
        : text(`PROXY TCP${src.family} ${src.a} ${dst.a} ${sport} ${dport}\r\n`);
      const got = header(parseProxyHeader(Buffer.concat([bytes, rest])));
      assert.deepEqual(got, { version: second ? 2 : 1, length: bytes.length, source: { address: plain(src.a), port: sport } });
      for (let n = 0; n < bytes.length; n++) assert.equal(parseProxyHeader(bytes.subarray(0, n)).kind, 'incomplete');
    }), { numRuns: 300 });
  });

  it('any bytes get a verdict, never an exception, and a header never claims more bytes than it was given or may take', () => {
    const signed = fc.tuple(fc.constantFrom(V2_SIGNATURE, text('PROXY '), Buffer.alloc(0)), fc.uint8Array({ maxLength: 300 }))
      .map(([head, tail]) => Buffer.concat([head, Buffer.from(tail)]));
    fc.assert(fc.property(signed, (data) => {
      const v = parseProxyHeader(data);
      if (v.kind === 'header') {
        assert.ok(v.header.length <= data.length);
        assert.ok(v.header.length <= (v.header.version === 1 ? V1_MAX : V2_MAX));
      }
      if (v.kind === 'incomplete') assert.ok(data.length < V2_MAX);
    }), { numRuns: 2000 });
  });

  it('a v1 header with a field changed to something that is not an address or port is refused', () => {
    const junk = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => /^[!-~]+$/.test(s) && !ipaddr.IPv4.isValidFourPartDecimal(s));
    fc.assert(fc.property(junk, fc.integer({ min: 0, max: 1 }), (bad, which) => {
      const fields = ['192.0.2.1', '198.51.100.2', '1', '2'];
      fields[which] = bad;
      assert.equal(parseProxyHeader(text(`PROXY TCP4 ${fields.join(' ')}\r\n`)).kind, 'invalid');
    }));
  });
});
