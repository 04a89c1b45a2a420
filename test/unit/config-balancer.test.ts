// The settings for running behind a load balancer: the drain on SIGTERM (bounded as
// SHUTDOWN_GRACE_MS is) and the balancers that speak the PROXY protocol (addresses and
// CIDRs in their usual forms, every bad entry named).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { configProblems as problems } from '../support/config-problems.ts';

describe('load balancer settings', () => {
  it('SHUTDOWN_DRAIN_MS: 5 s unless set, 0 for none, at most 600000', () => {
    assert.equal(loadConfig({}).shutdownDrainMs, 5000);
    assert.equal(loadConfig({ SHUTDOWN_DRAIN_MS: '0' }).shutdownDrainMs, 0);
    assert.equal(loadConfig({ SHUTDOWN_DRAIN_MS: '600000' }).shutdownDrainMs, 600_000);
    assert.deepEqual(problems({ SHUTDOWN_DRAIN_MS: '600001' }), ['SHUTDOWN_DRAIN_MS must be an integer from 0 to 600000 (got "600001")']);
    assert.deepEqual(problems({ SHUTDOWN_DRAIN_MS: '5s' }), ['SHUTDOWN_DRAIN_MS must be an integer from 0 to 600000 (got "5s")']);
  });

  it('PROXY_PROTOCOL_FROM: none unless set; addresses and CIDRs of either family', () => {
    assert.deepEqual(loadConfig({}).proxyProtocolFrom, []);
    assert.deepEqual(loadConfig({ PROXY_PROTOCOL_FROM: ' 10.0.0.5, 10.1.0.0/16,2001:db8::/64 ,::1' }).proxyProtocolFrom,
      ['10.0.0.5', '10.1.0.0/16', '2001:db8::/64', '::1']);
    assert.deepEqual(problems({ PROXY_PROTOCOL_FROM: '10.0.0.5,balancer.example.com,0x7f.1,10.0.0.0/33,fe80::1%eth0,2001:db8::/129' }), [
      'PROXY_PROTOCOL_FROM entry "balancer.example.com" is not an IP address or CIDR',
      'PROXY_PROTOCOL_FROM entry "0x7f.1" is not an IP address or CIDR',
      'PROXY_PROTOCOL_FROM entry "10.0.0.0/33" is not an IP address or CIDR',
      'PROXY_PROTOCOL_FROM entry "fe80::1%eth0" is not an IP address or CIDR',
      'PROXY_PROTOCOL_FROM entry "2001:db8::/129" is not an IP address or CIDR',
    ]);
  });
});
