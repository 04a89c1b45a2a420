// The demo (what `npm start` runs), driven as a new user drives it: it seeds an empty
// DATA_DIR and serves, every curl command it prints works when pasted into a shell as
// printed, and a second start reuses the data. Both database engines.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TestClient } from '../support/client.ts';
import { DB_KINDS } from '../support/harness.ts';
import { cliJson as json, freePort, Server, withStage } from '../support/stage.ts';
import type { Envelope, ErrorReply, Inserted, Updated } from '../support/api.ts';

interface CurlResult { readonly command: string; readonly statuses: readonly number[]; readonly body: Partial<Envelope> }

/** What the test adds to curl without touching the printed command line: a .curlrc that makes
 *  curl quiet, fail (exit 22) on an HTTP error, and report each status on stderr, where a
 *  `$(curl ... | sed ...)` in a printed pipeline cannot swallow it. */
function curlHome(dir: string): string {
  const home = join(dir, 'curl-home');
  mkdirSync(home);
  writeFileSync(join(home, '.curlrc'), 'silent\nshow-error\nfail-with-body\nmax-time = 20\nwrite-out = "%{stderr}HTTP %{http_code}\\n"\n');
  return home;
}

/** Runs one printed command through sh, as a user pasting it would. */
function runPrinted(command: string, home: string): Promise<CurlResult> {
  return new Promise((done, fail) => {
    const child = spawn('/bin/sh', ['-c', command], { env: { ...process.env, CURL_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (x: string) => { stdout += x; });
    child.stderr.setEncoding('utf8').on('data', (x: string) => { stderr += x; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', (err) => { clearTimeout(timer); fail(err); });
    child.once('close', (code) => {
      clearTimeout(timer);
      try {
        const where = `${command}\nexit ${code}\n--- stderr\n${stderr}--- stdout\n${stdout}`;
        assert.equal(code, 0, where);
        const lines = stderr.split('\n').filter(Boolean);
        assert.ok(lines.length > 0 && lines.every((l) => /^HTTP \d{3}$/.test(l)), `only status lines on stderr\n${where}`);
        let body: Partial<Envelope>;
        // A download (`-o FILE`) writes the file, not the envelope.
        if (/\s-o\s/.test(command)) return done({ command, statuses: lines.map((l) => Number(l.slice(5))), body: {} });
        try {
          body = JSON.parse(stdout) as Partial<Envelope>;
        } catch {
          return assert.fail(`not JSON\n${where}`);
        }
        done({ command, statuses: lines.map((l) => Number(l.slice(5))), body });
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

/** The block `demo` prints; its commands are the indented lines after the blank line. */
/** A log line with this message, exactly. */
const logLine = (msg: string) => new RegExp(`"msg":${JSON.stringify(msg).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);

const DEMO_BLOCK = /Asset tracker demo (created|reused) in (.+), listening on (\S+)\n[^\n]*\n\n((?: {2}\S[^\n]*\n)+)\n/;

function printedCommands(m: RegExpExecArray): string[] {
  return m[4]!.split('\n').filter(Boolean).map((l) => l.trim());
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Checks every HTTP status, then the envelope and verb response of the command's
 *  last curl, the one whose output reaches the terminal. */
function checkPrinted(r: CurlResult, baseUrl: string): void {
  const where = `${r.command}\nstatuses ${r.statuses.join(', ')}\n${JSON.stringify(r.body).slice(0, 2000)}`;
  assert.ok(r.statuses.every((s) => s === 200 || s === 201), where);
  const last = r.command.slice(r.command.lastIndexOf('curl '));
  const download = /\s-o\s+('[^']*'|\S+)/.exec(last);
  if (download) {
    const file = download[1]!.replace(/^'(.*)'$/, '$1').replaceAll("'\\''", "'");
    assert.deepEqual(r.statuses, [200], where);
    assert.equal(readFileSync(file).subarray(0, 5).toString('latin1'), '%PDF-', `the download is the demo's PDF\n${where}`);
    return;
  }
  const method = /\s-X (GET|POST|PUT|DELETE)\s/.exec(last)?.[1] ?? (/\s(-d|--data-binary)\s/.test(last) ? 'POST' : 'GET');
  const url = new RegExp(`${escapeRegExp(baseUrl)}(/[^\\s'"]*)`).exec(last);
  assert.ok(url, `the command targets ${baseUrl}: ${r.command}`);
  const { request, response } = r.body;
  assert.equal(typeof request, 'object', where);
  assert.equal(request!.url, url[1], where);
  assert.equal(request!.requested_version, '3.0', where);
  assert.equal(request!.api_version, 3, where);
  assert.equal(request!.request_method, method[0] + method.slice(1).toLowerCase(), where);
  assert.equal(typeof request!.timestamp, 'number', where);
  if (/\s-u ["']?session:/.test(last)) assert.match(String(request!.session?.hash), /^[0-9a-f]{64}$/, `a session call shows its session\n${where}`);
  else assert.equal(request!.session, null, where);
  assert.ok(response !== undefined && response !== null, where);
  // What the verb answers: a list, the counts of a write, never an error.
  const reply = response as Partial<ErrorReply & Inserted & Updated>;
  assert.equal(reply.error, undefined, where);
  const status = r.statuses[r.statuses.length - 1];
  if (method === 'GET') {
    assert.equal(status, 200, where);
    assert.deepEqual(Object.keys(r.body), ['request', 'pagination', 'response'], where);
    assert.equal(typeof r.body.pagination!.total_pages, 'number', where);
    assert.equal(typeof r.body.pagination!.total_records, 'number', where);
    assert.ok(Array.isArray(response) && response.length > 0, `a demo example shows data\n${where}`);
  } else if (method === 'PUT') {
    assert.equal(status, 201, where);
    assert.deepEqual(Object.keys(r.body), ['request', 'response'], where);
    assert.equal(reply.records_inserted, 1, where);
  } else {
    assert.equal(status, 200, where);
    assert.deepEqual(Object.keys(r.body), ['request', 'response'], where);
    assert.ok(reply.records_found! >= 1 && reply.records_updated! >= 1, `a demo update changes something\n${where}`);
  }
}

async function total(api: TestClient, path: string): Promise<number> {
  const r = await api.get(path);
  assert.equal(r.status, 200, r.text);
  return r.envelope.pagination!.total_records;
}

for (const kind of DB_KINDS) {
  describe(`asset-tracker demo (${kind})`, () => {
    it('seeds an empty DATA_DIR, serves, every printed curl command works as printed; a restart reuses the data', { timeout: 300_000 }, async () => {
      // A space in the path: the printed commands must survive being pasted into a shell.
      await withStage(kind, async (s) => {
        const home = curlHome(s.dir);
        const counted = ['/3.0/companies', '/3.0/assets', '/3.0/locations', '/3.0/departments', '/3.0/users', '/3.0/assetqueue', '/3.0/messages'];
        const clientPem = join(s.dataDir, 'demo', 'client.pem');
        const serverPem = join(s.dataDir, 'tls', 'server.pem');

        // First start: seeds, then serves — on the loopback only, HOST not set.
        const first = await Server.start(s, 'demo', { HOST: '', LOG_LEVEL: 'info' });
        let counts: number[] = [];
        let pems: string[] = [];
        try {
          const block = await first.waitForOutput(DEMO_BLOCK);
          assert.equal(block[1], 'created', block[0]);
          assert.equal(block[2], s.dataDir);
          assert.equal(block[3], first.baseUrl);
          // The log (on stdout too) is written asynchronously: it may come after the demo's block.
          await first.waitForOutput(logLine(`API listening at https://127.0.0.1:${first.port} (HTTPS, client certificates)`));
          await first.waitForOutput(logLine(`Portal listening at https://127.0.0.1:${first.portalPort} (HTTPS, sign in with a username and password)`));
          // The admin's password is made with the demo, shown once, and kept (owner-only) for the login example.
          const passwordFile = join(s.dataDir, 'demo', 'admin-password');
          const shown = await first.waitForOutput(/The demo admin demo\.admin logs in with the password (\S+) \(shown this once; kept in (.+) for the example above\)\.\n/);
          assert.equal(shown[2], passwordFile);
          assert.equal(readFileSync(passwordFile, 'utf8'), `${shown[1]}\n`);
          assert.match(shown[1]!, /^\S{16}$/);
          assert.equal(statSync(passwordFile).mode & 0o777, 0o600);
          const commands = printedCommands(block);
          assert.ok(commands.length >= 5, block[0]);
          for (const command of commands) {
            assert.match(command, /\bcurl /);
            checkPrinted(await runPrinted(command, home), first.baseUrl);
          }
          pems = [readFileSync(clientPem, 'utf8'), readFileSync(serverPem, 'utf8')];
          const api = new TestClient(first.port, pems[1]!, {
            certPem: readFileSync(join(s.dataDir, 'demo', 'cert.pem'), 'utf8'), keyPem: readFileSync(join(s.dataDir, 'demo', 'key.pem'), 'utf8'),
          });
          try {
            counts = [];
            for (const path of counted) counts.push(await total(api, path));
          } finally {
            api.close();
          }
          assert.ok(counts.every((n) => n > 0), `the demo fills every listed endpoint: ${counted.map((p, i) => `${p}=${counts[i]}`).join(' ')}`);
          assert.deepEqual(await first.stop(), { code: 0, signal: null }, `the demo exits cleanly on SIGTERM\n${first.stderr}`);
        } finally {
          await first.dispose();
        }
        const clients = json(await s.cli('client', 'list', '--json')) as unknown[];
        assert.equal(clients.length, 1, 'the demo registers one certificate');

        // Second start on the same DATA_DIR (and database): reuses, seeds nothing again; behind a trusted proxy too this time.
        const proxyPort = await freePort();
        const second = await Server.start(s, 'demo', { LOG_LEVEL: 'info', TRUSTED_PROXIES: '127.0.0.1', CLIENT_CERT_HEADER: 'X-Client-Cert', HTTP_PORT: String(proxyPort) });
        try {
          const block = await second.waitForOutput(DEMO_BLOCK);
          assert.equal(block[1], 'reused', block[0]);
          for (const line of [`API listening at https://127.0.0.1:${second.port} (HTTPS, client certificates)`,
            `API listening at http://127.0.0.1:${proxyPort} (plain HTTP, for the trusted proxies only)`]) {
            await second.waitForOutput(logLine(line));
          }
          await second.waitForOutput(new RegExp(`The demo admin demo\\.admin logs in with the password kept in ${join(s.dataDir, 'demo', 'admin-password')
            .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.\n`));
          assert.deepEqual([readFileSync(clientPem, 'utf8'), readFileSync(serverPem, 'utf8')], pems, 'the certificates are kept');
          const api = new TestClient(second.port, pems[1]!, {
            certPem: readFileSync(join(s.dataDir, 'demo', 'cert.pem'), 'utf8'), keyPem: readFileSync(join(s.dataDir, 'demo', 'key.pem'), 'utf8'),
          });
          try {
            const again: number[] = [];
            for (const path of counted) again.push(await total(api, path));
            assert.deepEqual(again, counts, `nothing duplicated: ${counted.join(' ')}`);
            // The printed commands keep working against the reused data.
            const endpoints = await runPrinted(printedCommands(block)[0]!, home);
            checkPrinted(endpoints, second.baseUrl);
          } finally {
            api.close();
          }
          assert.deepEqual(await second.stop(), { code: 0, signal: null }, `the demo exits cleanly on SIGTERM\n${second.stderr}`);
        } finally {
          await second.dispose();
        }
        assert.equal((json(await s.cli('client', 'list', '--json')) as unknown[]).length, 1, 'no second demo certificate');
      }, 'asset tracker demo ');
    });
  });
}
