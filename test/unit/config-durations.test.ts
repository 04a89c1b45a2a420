// Duration settings are bounded at start-up: a value beyond what a timer can wait
// (2^31 − 1 ms, about 24.8 days) would make Node run the timer after 1 ms — a job
// set to run every 600 hours would spin — so it is refused with a clear message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig, LONGEST_TIMER_MS } from '../../src/config.ts';
import { configProblems as problems } from '../support/config-problems.ts';

describe('duration settings', () => {
  it('take ms, s, m, h and d, up to the longest a timer can wait', () => {
    assert.equal(loadConfig({ REMINDER_INTERVAL: '15m' }).reminderIntervalMs, 900_000);
    assert.equal(loadConfig({ REMINDER_INTERVAL: '7d' }).reminderIntervalMs, 7 * 86_400_000);
    assert.equal(loadConfig({ REMINDER_INTERVAL: '24d' }).reminderIntervalMs, 24 * 86_400_000);
    assert.equal(loadConfig({ REMINDER_INTERVAL: `${LONGEST_TIMER_MS}ms` }).reminderIntervalMs, LONGEST_TIMER_MS);
  });

  it('refuse more, every one of them, with the setting and the bound named', () => {
    assert.deepEqual(problems({ REMINDER_INTERVAL: '600h' }),
      ['REMINDER_INTERVAL must be at most 24d (2147483647 ms, the longest a timer can wait; got "600h")']);
    assert.deepEqual(problems({ REMINDER_INTERVAL: '25d', WEBHOOK_TIMEOUT: `${LONGEST_TIMER_MS + 1}ms`, HEADERS_TIMEOUT: '9999h' }), [
      'REMINDER_INTERVAL must be at most 24d (2147483647 ms, the longest a timer can wait; got "25d")',
      'WEBHOOK_TIMEOUT must be at most 24d (2147483647 ms, the longest a timer can wait; got "2147483648ms")',
      'HEADERS_TIMEOUT must be at most 24d (2147483647 ms, the longest a timer can wait; got "9999h")',
    ]);
  });
});
