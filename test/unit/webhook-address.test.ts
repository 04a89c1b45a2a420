// The webhook address rule, table-driven: every range that must be refused,
// in its IPv4 and IPv6 forms and the IPv6 forms that carry an IPv4 address, and
// host names as URLs spell them (decimal, octal, hex) and as DNS resolves them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refusal } from '../../src/webhooks/address.ts';
import { resolveTarget } from '../../src/webhooks/deliver.ts';

const REFUSED: readonly [string, string][] = [
  ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'], ['10.0.0.1', 'private'], ['172.16.5.4', 'private'],
  ['192.168.1.1', 'private'], ['169.254.169.254', 'linkLocal'], ['100.64.0.1', 'carrierGradeNat'], ['224.0.0.251', 'multicast'],
  ['0.0.0.0', 'unspecified'], ['255.255.255.255', 'broadcast'], ['240.0.0.1', 'reserved'],
  ['::1', 'loopback'], ['::', 'unspecified'], ['fe80::1', 'linkLocal'], ['fc00::1', 'uniqueLocal'], ['fd12:3456::1', 'uniqueLocal'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'ipv4Mapped form of a loopback address'], ['::ffff:10.0.0.1', 'ipv4Mapped form of a private address'],
  ['::ffff:0:7f00:1', 'rfc6145 form of a loopback address'], ['64:ff9b::7f00:1', 'rfc6052 form of a loopback address'],
  ['64:ff9b::a9fe:a9fe', 'rfc6052 form of a linkLocal address'], ['2002:7f00:1::', '6to4 form of a loopback address'],
  ['2002:c0a8:101::1', '6to4 form of a private address'],
  // Teredo whose client (stored inverted) is 127.0.0.1: ~7f000001 = 80fffffe.
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo form of a loopback address'],
];
const ALLOWED = ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'];

describe('webhook address rule', () => {
  for (const [address, why] of REFUSED) {
    it(`${address} is refused (${why})`, () => assert.equal(refusal(address), why));
  }
  for (const address of ALLOWED) it(`${address} is allowed`, () => assert.equal(refusal(address), null));

  for (const host of ['2130706433', '0177.0.0.1', '0x7f.0.0.1', '127.1', '[::1]', '[::ffff:7f00:1]', 'localhost']) {
    it(`https://${host}/ resolves to a refused address`, async () => {
      await assert.rejects(resolveTarget(new URL(`https://${host}/hook`), false), /refused/);
    });
  }
  it('with WEBHOOK_ALLOW_PRIVATE the rule is lifted, and only the rule', async () => {
    assert.equal((await resolveTarget(new URL('https://localhost/hook'), true)).address.startsWith('127.') ||
      (await resolveTarget(new URL('https://localhost/hook'), true)).address === '::1', true);
  });
});
