// PORTAL_PORT: the company portal's port, 8444 unless set, 0 for none, and never a
// port another listener of the service already takes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { configProblems as problems } from '../support/config-problems.ts';

describe('PORTAL_PORT', () => {
  it('is 8444 by default, any port when set, and off at 0', () => {
    assert.equal(loadConfig({}).portalPort, 8444);
    assert.equal(loadConfig({ PORTAL_PORT: '9444' }).portalPort, 9444);
    assert.equal(loadConfig({ PORTAL_PORT: '0' }).portalPort, null);
  });

  it('refuses what is not a port, and a port the API, the proxy listener or the metrics take', () => {
    assert.deepEqual(problems({ PORTAL_PORT: 'https' }), ['PORTAL_PORT must be an integer from 0 to 65535 (got "https")']);
    assert.deepEqual(problems({ PORTAL_PORT: '70000' }), ['PORTAL_PORT must be an integer from 0 to 65535 (got "70000")']);
    const taken = 'PORTAL_PORT must differ from PORT, HTTP_PORT and METRICS_PORT';
    assert.deepEqual(problems({ PORTAL_PORT: '8443' }), [`${taken} (got 8443)`]);
    assert.deepEqual(problems({ PORT: '9000', PORTAL_PORT: '9000' }), [`${taken} (got 9000)`]);
    assert.deepEqual(problems({ PORTAL_PORT: '9100', METRICS_PORT: '9100' }), [`${taken} (got 9100)`]);
    assert.deepEqual(problems({ PORTAL_PORT: '8080', TRUSTED_PROXIES: '10.0.0.1', CLIENT_CERT_HEADER: 'X-Cert' }), [`${taken} (got 8080)`]);
    assert.deepEqual(problems({ PORTAL_PORT: '8080' }), [], 'HTTP_PORT counts only when the proxy listener is on');
  });
});
