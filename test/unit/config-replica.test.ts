// DATABASE_READ_URL and READ_MAX_LAG: a replica needs PostgreSQL, and the service refuses to start without it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { configProblems } from '../support/config-problems.ts';

const PRIMARY = 'postgres://127.0.0.1:5432/tracker';

describe('read replica settings', () => {
  it('a replica URL with a PostgreSQL primary, READ_MAX_LAG 5 s unless set', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: PRIMARY, DATABASE_READ_URL: 'postgres://replica:5432/tracker' }).readReplica,
      { url: 'postgres://replica:5432/tracker', maxLagMs: 5000 });
    assert.equal(loadConfig({ DATABASE_URL: PRIMARY, DATABASE_READ_URL: 'postgresql://r/t', READ_MAX_LAG: '500ms' }).readReplica?.maxLagMs, 500);
    assert.equal(loadConfig({ DATABASE_URL: PRIMARY }).readReplica, null);
  });

  it('refused with SQLite, with a message that says why', () => {
    const sqlite = 'DATABASE_READ_URL needs DATABASE_URL to be a postgres:// URL: the embedded SQLite database has no read replicas';
    assert.deepEqual(configProblems({ DATABASE_READ_URL: 'postgres://r/t' }), [sqlite]);
    assert.deepEqual(configProblems({ DATABASE_URL: 'sqlite:/tmp/x.sqlite', DATABASE_READ_URL: 'postgres://r/t' }), [sqlite]);
  });

  it('refuses another scheme and a lag that is no duration', () => {
    assert.deepEqual(configProblems({ DATABASE_URL: PRIMARY, DATABASE_READ_URL: 'mysql://r/t' }), ['DATABASE_READ_URL must start with postgres://']);
    assert.deepEqual(configProblems({ DATABASE_URL: PRIMARY, DATABASE_READ_URL: 'postgres://r/t', READ_MAX_LAG: 'soon' }),
      ['READ_MAX_LAG must be a duration such as 30s, 15m, 1h or 7d (got "soon")']);
  });
});
