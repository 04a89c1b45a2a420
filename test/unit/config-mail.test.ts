// E-mail's settings: off when neither SMTP_URL nor MAIL_FROM is set, on with both,
// and every half or malformed setting refused with what to fix.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { chained } from '../support/certs.ts';
import { configProblems as problems } from '../support/config-problems.ts';

const ON = { SMTP_URL: 'smtp://user%40example.com:p%3Ass@smtp.example.com:587', MAIL_FROM: 'Asset Tracker <tracker@example.com>' };

describe('e-mail settings', () => {
  it('are off when neither is set, on with both, the portal links following PORTAL_BASE_URL', () => {
    assert.equal(loadConfig({}).mail, null);
    const mail = loadConfig({ ...ON, PORT: '9443' }).mail!;
    assert.deepEqual(mail, { smtpUrl: ON.SMTP_URL, from: ON.MAIL_FROM, ca: null, baseUrl: 'https://localhost:9443',
      portalBaseUrl: 'https://localhost:8444', timeoutMs: 30_000 });
    assert.equal(loadConfig({ ...ON, PORTAL_BASE_URL: 'https://portal.example.com/' }).mail!.portalBaseUrl, 'https://portal.example.com');
    assert.equal(loadConfig({ ...ON, PORTAL_PORT: '0' }).mail!.portalBaseUrl, null);
    assert.equal(loadConfig({ ...ON, SMTP_URL: 'smtps://smtp.example.com', SMTP_TIMEOUT: '5s' }).mail!.timeoutMs, 5000);
  });

  it('refuse one without the other, a URL that is not smtp(s), a From that is not one address, a CA that is no certificate', () => {
    const together = 'SMTP_URL and MAIL_FROM must be set together (e-mail is on when both are set, off when neither is)';
    assert.deepEqual(problems({ SMTP_URL: ON.SMTP_URL }), [together]);
    assert.deepEqual(problems({ MAIL_FROM: ON.MAIL_FROM }), [together]);
    assert.deepEqual(problems({ SMTP_CA_FILE: '/ca.pem' }), ['SMTP_CA_FILE is set but e-mail is off: set SMTP_URL and MAIL_FROM too']);
    const url = 'SMTP_URL must be smtp://[user:password@]host[:port] or smtps://… (user and password percent-encoded)';
    for (const bad of ['http://smtp.example.com', 'smtp.example.com:25', 'smtp://smtp.example.com/path']) {
      assert.deepEqual(problems({ ...ON, SMTP_URL: bad }), [url], bad);
    }
    for (const bad of ['tracker', 'a@example.com, b@example.com', 'x@example.com\r\nBcc: y@example.com']) {
      assert.deepEqual(problems({ ...ON, MAIL_FROM: bad }), [`MAIL_FROM must be one e-mail address, with a display name if wanted (got "${bad}")`]);
    }
    const dir = mkdtempSync(join(tmpdir(), 'mail-config-'));
    writeFileSync(join(dir, 'junk.pem'), 'not a certificate');
    writeFileSync(join(dir, 'ca.pem'), chained('relay').caPem);
    assert.deepEqual(problems({ ...ON, SMTP_CA_FILE: join(dir, 'junk.pem') }), [`SMTP_CA_FILE must be a readable PEM certificate (got "${join(dir, 'junk.pem')}")`]);
    assert.match(loadConfig({ ...ON, SMTP_CA_FILE: join(dir, 'ca.pem') }).mail!.ca!, /BEGIN CERTIFICATE/);
  });
});
