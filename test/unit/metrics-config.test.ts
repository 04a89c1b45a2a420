// METRICS_PORT and METRICS_HOST: off unless the port is set, loopback by default,
// never the API's own ports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

const problems = (env: NodeJS.ProcessEnv): readonly string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.problems;
  }
};

describe('metrics settings', () => {
  it('no metrics listener without METRICS_PORT', () => {
    assert.equal(loadConfig({}).metrics, null);
    assert.equal(loadConfig({ METRICS_PORT: '' }).metrics, null);
  });

  it('METRICS_HOST defaults to loopback', () => {
    assert.deepEqual(loadConfig({ METRICS_PORT: '9464' }).metrics, { host: '127.0.0.1', port: 9464 });
    assert.deepEqual(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metrics, { host: '0.0.0.0', port: 9464 });
  });

  it('refuses a port that is no port, or one the API listens on', () => {
    assert.deepEqual(problems({ METRICS_PORT: 'ninety' }), ['METRICS_PORT must be an integer from 0 to 65535 (got "ninety")']);
    assert.deepEqual(problems({ METRICS_PORT: '70000' }), ['METRICS_PORT must be an integer from 0 to 65535 (got "70000")']);
    assert.deepEqual(problems({ METRICS_PORT: '8443' }), ['METRICS_PORT must differ from PORT and HTTP_PORT (got 8443)']);
    assert.deepEqual(problems({ METRICS_PORT: '9000', PORT: '9000' }), ['METRICS_PORT must differ from PORT and HTTP_PORT (got 9000)']);
    assert.deepEqual(problems({ METRICS_PORT: '8080', TRUSTED_PROXIES: '127.0.0.1', CLIENT_CERT_HEADER: 'X-SSL-Client-Cert' }),
      ['METRICS_PORT must differ from PORT and HTTP_PORT (got 8080)']);
    assert.deepEqual(problems({ METRICS_PORT: '8080' }), [], 'HTTP_PORT is only taken with a proxy');
  });
});
