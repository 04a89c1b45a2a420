// The client's address behind trusted proxies: X-Forwarded-For walked
// from the right through the trusted hops; ports and brackets understood; a
// malformed entry ends the walk at the hop that wrote it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientAddress, plainAddress, trustOf } from '../../src/auth/forwarded.ts';

const trust = trustOf(['127.0.0.1', '10.0.0.0/8', '::1']);

const CASES: readonly [peer: string, headers: readonly string[], client: string][] = [
  ['127.0.0.1', ['1.2.3.4'], '1.2.3.4'],
  ['127.0.0.1', ['1.2.3.4, 8.8.8.8:123'], '8.8.8.8'],
  ['127.0.0.1', ['1.2.3.4, 8.8.8.8'], '8.8.8.8'],
  ['127.0.0.1', ['1.2.3.4, garbage'], '127.0.0.1'],
  ['127.0.0.1', ['1.2.3.4, unknown'], '127.0.0.1'],
  ['127.0.0.1', ['1.2.3.4, [2001:db8::1]:443'], '2001:db8::1'],
  ['127.0.0.1', ['1.2.3.4, [2001:db8::1]'], '2001:db8::1'],
  ['127.0.0.1', ['1.2.3.4, 2001:db8::1'], '2001:db8::1'],
  ['127.0.0.1', ['1.2.3.4, 10.0.0.5'], '1.2.3.4'],
  ['127.0.0.1', ['1.2.3.4, 10.0.0.5:8080, 10.1.2.3'], '1.2.3.4'],
  ['127.0.0.1', ['garbage, 10.0.0.5'], '10.0.0.5'],
  ['127.0.0.1', ['1.2.3.4', '5.6.7.8'], '5.6.7.8'],
  ['127.0.0.1', ['1.2.3.4', '10.0.0.9'], '1.2.3.4'],
  ['127.0.0.1', [], '127.0.0.1'],
  ['127.0.0.1', [''], '127.0.0.1'],
  ['127.0.0.1', ['1.2.3.4,  '], '127.0.0.1'],
  ['127.0.0.1', ['  1.2.3.4  ,  5.6.7.8  '], '5.6.7.8'],
  ['127.0.0.1', ['::ffff:8.8.8.8'], '8.8.8.8'],
  ['127.0.0.1', ['1.2.3.4, ::ffff:10.0.0.7'], '1.2.3.4'],
  ['127.0.0.1', ['0x7f.1'], '127.0.0.1'],
  ['127.0.0.1', ['2130706433'], '127.0.0.1'],
  ['127.0.0.1', ['1.2.3.4, 256.1.1.1'], '127.0.0.1'],
  ['127.0.0.1', ['fe80::1%eth0'], '127.0.0.1'],
  ['127.0.0.1', ['1.2.3.4:99999'], '127.0.0.1'],
  ['::1', ['2001:db8::2'], '2001:db8::2'],
  ['::1', ['2001:DB8:0:0:0:0:0:3'], '2001:db8::3'],
  // Every hop trusted: the left-most, the first one our proxies saw.
  ['127.0.0.1', ['10.9.9.9, 10.0.0.5'], '10.9.9.9'],
];

describe('X-Forwarded-For', () => {
  for (const [peer, headers, client] of CASES) {
    it(`from ${peer} with ${JSON.stringify(headers)} → ${client}`, () => {
      assert.equal(clientAddress(peer, headers, trust), client);
    });
  }

  it('reads addresses in their usual forms only', () => {
    assert.equal(plainAddress(' 1.2.3.4 '), '1.2.3.4');
    assert.equal(plainAddress('[::1]:8443'), '::1');
    assert.equal(plainAddress('1.2.3'), null);
    assert.equal(plainAddress('010.1.1.1'), null);
    assert.equal(plainAddress(''), null);
  });
});
