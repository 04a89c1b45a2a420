// The operator CLI driven as an operator drives it: separate
// processes, a real DATA_DIR, both database engines, a running server (the demo has
// a file of its own, demo.test.ts).
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSelfSigned } from '../../src/tls/x509.ts';
import { chained } from '../support/certs.ts';
import type { TestResponse } from '../support/client.ts';
import { startServe } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { cliJson as json, expectCliOk as expectOk, limited, type Result, ROOT, runCli, show, type Stage, withDatabase, withStage } from '../support/stage.ts';
import type { LoggedIn } from '../support/api.ts';

const DAY_MS = 86_400_000;
/** The migrations the code base ships, by file name: `migrate` must apply each of them exactly once. */
const MIGRATIONS = readdirSync(join(ROOT, 'src/db/migrations')).filter((f) => /^\d{4}_\w+\.ts$/.test(f)).map((f) => f.slice(0, -3)).sort();
const USAGE_LINES = ['serve', 'demo', 'migrate', 'company add --name N [--parent ID]', 'cert create --out DIR [--cn NAME] [--days N]',
  'client add --company ID --cert FILE [--name N] [--impersonation]', 'client list', 'client revoke ID', 'user add --company ID --username U --email E',
  'reminders run'];

/** A failure the operator can read: one `error: ...` line on stderr, nothing on stdout, no stack trace. */
function expectError(r: Result, message: RegExp): void {
  assert.equal(r.code, 1, show(r));
  assert.equal(r.stdout, '', show(r));
  assert.match(r.stderr, /^error: /, show(r));
  assert.match(r.stderr, message, show(r));
  assert.doesNotMatch(r.stderr, /\n\s+at /, `a stack trace is not an error message\n${show(r)}`);
}

function expectUsage(r: Result, message: RegExp): void {
  assert.equal(r.code, 2, show(r));
  assert.equal(r.stdout, '', show(r));
  assert.match(r.stderr, message, show(r));
}

// ---------------------------------------------------------------------------------------------
// Certificates, computed independently of the code under test.

/** SPKI fingerprint worked out from the private key, not from the certificate. */
function fingerprintOfKey(keyPem: string): string {
  return createHash('sha256').update(createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' })).digest('hex');
}

async function certCreate(stage: Stage, name: string, cn: string): Promise<{ dir: string; certFile: string; keyPem: string; certPem: string; fingerprint: string }> {
  const dir = join(stage.dir, 'certs', name);
  expectOk(await stage.cli('cert', 'create', '--out', dir, '--cn', cn));
  const keyPem = readFileSync(join(dir, 'key.pem'), 'utf8');
  return { dir, certFile: join(dir, 'cert.pem'), keyPem, certPem: readFileSync(join(dir, 'cert.pem'), 'utf8'), fingerprint: fingerprintOfKey(keyPem) };
}

function idOf(r: Result): number {
  const out = expectOk(r);
  assert.match(out, /^[1-9]\d*\n$/, show(r));
  return Number(out);
}

// =============================================================================================

describe('asset-tracker: usage', () => {
  it('help, --help and no command print every command on stdout and exit 0', { timeout: 120_000 }, async () => {
    await withStage('sqlite', async (s) => {
      const results = await limited(3, [['help'], ['--help'], []].map((args) => () => s.cli(...args)));
      for (const r of results) {
        const out = expectOk(r);
        assert.match(out, /^usage: asset-tracker <command>\n/, show(r));
        for (const line of USAGE_LINES) assert.ok(out.includes(`  ${line}`), `usage lacks "${line}"\n${out}`);
      }
    });
  });

  it('an unknown command exits 2 with the usage on stderr', { timeout: 120_000 }, async () => {
    await withStage('sqlite', async (s) => {
      const results = await limited(3, [['frobnicate'], ['company'], ['client', 'delete', '1']].map((args) => () => s.cli(...args)));
      for (const r of results) {
        expectUsage(r, /^usage: asset-tracker <command>\n/);
        for (const line of USAGE_LINES) assert.ok(r.stderr.includes(`  ${line}`), `usage lacks "${line}"\n${r.stderr}`);
      }
      assert.equal(existsSync(s.dataDir), false, 'a usage error must not touch DATA_DIR');
    });
  });

  it('a missing required option or a bad option value exits 2 with the usage on stderr, and changes nothing', { timeout: 120_000 }, async () => {
    await withStage('sqlite', async (s) => {
      const out = join(s.dir, 'never');
      const cases: [string[], RegExp][] = [
        [['company', 'add'], /^--name is required\nusage: asset-tracker company add --name N/],
        [['company', 'add', '--parent', '1'], /^--name is required\nusage: asset-tracker company add /],
        [['cert', 'create'], /^--out is required\nusage: asset-tracker cert create --out DIR/],
        [['client', 'add', '--company', '1'], /^--cert is required\nusage: asset-tracker client add /],
        [['client', 'add', '--cert', 'x.pem'], /^--company is required\nusage: asset-tracker client add /],
        [['client', 'revoke'], /^usage: asset-tracker client revoke ID/],
        [['user', 'add', '--company', '1', '--username', 'u'], /^--email is required\nusage: asset-tracker user add /],
        [['user', 'add', '--company', '1', '--email', 'u@example.com'], /^--username is required\nusage: asset-tracker user add /],
        [['company', 'add', '--name', 'A', '--bogus'], /Unknown option '--bogus'/],
        [['company', 'add', '--name'], /--name/],
        [['company', 'add', '--name', 'A', '--parent', 'abc'], /^--parent must be a positive integer/],
        [['client', 'revoke', 'abc'], /^ID must be a positive integer/],
        [['cert', 'create', '--out', out, '--days', '0'], /^--days must be a positive integer/],
        [['cert', 'create', '--out', out, '--days', '1.5'], /^--days must be a positive integer/],
      ];
      const results = await limited(3, cases.map(([args]) => () => s.cli(...args)));
      results.forEach((r, i) => expectUsage(r, cases[i]![1]));
      assert.equal(existsSync(out), false, 'a rejected cert create must not write anything');
      assert.equal(existsSync(s.dataDir), false, 'a usage error must not touch DATA_DIR');
    });
  });
});

describe('asset-tracker cert create', () => {
  it('writes cert.pem, key.pem and client.pem: self-signed, with the CN and validity asked for', { timeout: 120_000 }, async () => {
    await withStage('sqlite', async (s) => {
      const dir = join(s.dir, 'nested', 'laptop');
      const before = Date.now();
      const printed = json(await s.cli('cert', 'create', '--out', dir, '--cn', 'Field Laptop 7', '--days', '30', '--json'));
      const files = ['cert.pem', 'key.pem', 'client.pem'].map((f) => join(dir, f));
      const certPem = readFileSync(files[0]!, 'utf8');
      const keyPem = readFileSync(files[1]!, 'utf8');
      const fingerprint = fingerprintOfKey(keyPem);
      assert.deepEqual(printed, { dir, fingerprint, files });

      const cert = new X509Certificate(certPem);
      assert.equal(cert.subject, 'CN=Field Laptop 7');
      assert.equal(cert.issuer, cert.subject, 'self-signed: issuer = subject');
      assert.ok(cert.checkIssued(cert) && cert.verify(cert.publicKey), 'self-signed: verifies with its own key');
      assert.equal(cert.ca, false, 'a client certificate is not a CA');
      const notBefore = Date.parse(cert.validFrom);
      const notAfter = Date.parse(cert.validTo);
      assert.ok(notBefore <= before && notBefore > before - 10 * 60_000, `valid from ${cert.validFrom}: now, give or take a few minutes`);
      assert.equal(notAfter - notBefore, 30 * DAY_MS, `valid for 30 days: ${cert.validFrom} .. ${cert.validTo}`);
      assert.equal(createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('hex'), fingerprint,
        'cert.pem holds the public key of key.pem');

      assert.equal(readFileSync(files[2]!, 'utf8'), certPem + keyPem, 'client.pem = cert.pem + key.pem');
      for (const f of [files[1]!, files[2]!]) assert.equal(statSync(f).mode & 0o777, 0o600, `${f} holds a private key: owner only`);
    });
  });

  it('without --cn and --days it prints one human line and writes a certificate valid now', { timeout: 120_000 }, async () => {
    await withStage('sqlite', async (s) => {
      const dir = join(s.dir, 'default');
      const out = expectOk(await s.cli('cert', 'create', '--out', dir));
      const keyPem = readFileSync(join(dir, 'key.pem'), 'utf8');
      assert.equal(out.split('\n').length, 2, `one line: ${out}`);
      assert.ok(out.includes(fingerprintOfKey(keyPem)), `the line names the fingerprint: ${out}`);
      for (const f of ['cert.pem', 'key.pem', 'client.pem']) assert.ok(out.includes(join(dir, f)), `the line names ${f}: ${out}`);
      const cert = new X509Certificate(readFileSync(join(dir, 'cert.pem')));
      assert.equal(cert.issuer, cert.subject);
      assert.ok(cert.verify(cert.publicKey));
      assert.ok(Date.parse(cert.validFrom) <= Date.now() && Date.parse(cert.validTo) > Date.now() + DAY_MS, `${cert.validFrom} .. ${cert.validTo}`);
    });
  });

  it('an --out that cannot be a directory fails with a readable error, not a stack trace', { timeout: 120_000 }, async () => {
    await withStage('sqlite', async (s) => {
      const file = join(s.dir, 'a-file');
      writeFileSync(file, 'x');
      expectError(await s.cli('cert', 'create', '--out', join(file, 'sub')), /a-file/);
    });
  });
});

for (const kind of DB_KINDS) {
  describe(`asset-tracker operator commands (${kind})`, () => {
    it('migrate applies every migration, then says the schema is up to date (human and --json)', { timeout: 120_000 }, async () => {
      await withStage(kind, async (s) => {
        assert.equal(expectOk(await s.cli('migrate')), `applied ${MIGRATIONS.join(', ')}\n`);
        assert.deepEqual(json(await s.cli('migrate', '--json')), { applied: [] });
        assert.equal(expectOk(await s.cli('migrate')), 'the schema is up to date\n');
      });
    });

    it('three migrate processes started at once on a fresh database all succeed, each migration applied once', { timeout: 120_000 }, async () => {
      await withStage(kind, async (s) => {
        const env = s.env();
        const results = await Promise.all([1, 2, 3].map(() => runCli(['migrate', '--json'], env)));
        const applied = results.map((r) => (JSON.parse(expectOk(r)) as { applied: string[] }).applied);
        assert.deepEqual(applied.flat().sort(), MIGRATIONS, `each migration exactly once across the three: ${JSON.stringify(applied)}`);
        assert.deepEqual(json(await s.cli('migrate', '--json')), { applied: [] });
        // The schema the race left behind is complete and usable.
        idOf(await s.cli('company', 'add', '--name', 'After the race'));
        const migrated = await withDatabase(s, (db) => db.selectFrom('kysely_migration' as never).select('name' as never).execute());
        assert.deepEqual((migrated as { name: string }[]).map((r) => r.name).sort(), MIGRATIONS);
      });
    });

    it('company add prints the new id; --parent nests it; --json gives the record; an unknown parent fails on stderr', { timeout: 120_000 }, async () => {
      await withStage(kind, async (s) => {
        const root = idOf(await s.cli('company', 'add', '--name', 'Acme'));
        const printed = json(await s.cli('company', 'add', '--name', 'Acme Labs', '--parent', String(root), '--json')) as { id: number };
        assert.equal(typeof printed.id, 'number');
        assert.notEqual(printed.id, root);
        assert.deepEqual(printed, { id: printed.id, name: 'Acme Labs', parent_id: root });
        expectError(await s.cli('company', 'add', '--name', 'Orphan', '--parent', '99999'), /^error: company 99999 does not exist\n$/);
        expectError(await s.cli('company', 'add', '--name', '   '), /^error: a company needs a name\n$/);

        const rows = await withDatabase(s, (db) => db.selectFrom('companies').select(['id', 'name', 'parent_id']).orderBy('id').execute());
        assert.deepEqual(rows.map((r) => ({ id: Number(r.id), name: r.name, parent_id: r.parent_id === null ? null : Number(r.parent_id) })), [
          { id: root, name: 'Acme', parent_id: null },
          { id: printed.id, name: 'Acme Labs', parent_id: root },
        ]);
      });
    });

    it('client add registers a key, client list shows it, client revoke shuts it out of a running server', { timeout: 240_000 }, async () => {
      await withStage(kind, async (s) => {
        const company = idOf(await s.cli('company', 'add', '--name', 'Acme'));
        const a = await certCreate(s, 'a', 'Workshop PC');
        const b = await certCreate(s, 'b', 'Support desk');
        const server = await startServe(s);
        try {
          assert.ok(server.stderr.includes(server.caFile), `serve says where it created its certificate\n${server.stderr}`);

          // Registered while the server runs: effective at once.
          const added = expectOk(await s.cli('client', 'add', '--company', String(company), '--cert', a.certFile, '--name', 'Workshop PC 1'));
          const m = /^([1-9]\d*) ([0-9a-f]{64})\n$/.exec(added);
          assert.ok(m, `"<id> <fingerprint>": ${added}`);
          const idA = Number(m[1]);
          assert.equal(m[2], a.fingerprint);

          const infoB = json(await s.cli('client', 'add', '--company', String(company), '--cert', b.certFile, '--impersonation', '--json')) as Record<string, unknown>;
          assert.equal(typeof infoB.id, 'number');
          assert.equal(typeof infoB.created, 'string');
          assert.deepEqual(infoB, { id: infoB.id, companyId: company, name: 'Support desk', fingerprint: b.fingerprint, impersonation: true,
            created: infoB.created, revoked: null });

          // Registration is by key: the same certificate, or a re-issue with the same key, is refused.
          const reissued = join(s.dir, 'reissued.pem');
          writeFileSync(reissued, createSelfSigned({ cn: 'Workshop PC (renewed)', keyPem: a.keyPem, days: 90 }).certPem);
          const notPem = join(s.dir, 'not.pem');
          writeFileSync(notPem, 'hello');
          // A certificate no call could use: a CA's leaf (every call would get 401 without a hint).
          const caIssued = join(s.dir, 'ca-issued.pem');
          writeFileSync(caIssued, chained('Lab PC').leafPem);
          const refused: [string[], RegExp][] = [
            [['--company', String(company), '--cert', caIssued], /^error: the certificate is issued by CN=Lab PC CA, not self-signed; the service accepts self-signed /],
            [['--company', String(company), '--cert', a.certFile], new RegExp(`^error: a certificate with fingerprint ${a.fingerprint} is already registered\n$`)],
            [['--company', String(company), '--cert', reissued], new RegExp(`^error: a certificate with fingerprint ${a.fingerprint} is already registered\n$`)],
            [['--company', '99999', '--cert', reissued], /^error: company 99999 does not exist\n$/],
            [['--company', String(company), '--cert', notPem], /^error: the file does not hold a PEM certificate\n$/],
            [['--company', String(company), '--cert', join(s.dir, 'missing.pem')], /missing\.pem/],
          ];
          const refusals = await limited(3, refused.map(([args]) => () => s.cli('client', 'add', ...args)));
          refusals.forEach((r, i) => expectError(r, refused[i]![1]));

          const listed = expectOk(await s.cli('client', 'list')).split('\n').filter(Boolean);
          assert.equal(listed.length, 2, listed.join('\n'));
          assert.ok(listed[0]!.startsWith(`${idA}\t`) && listed[0]!.includes(a.fingerprint) && listed[0]!.includes('active')
            && listed[0]!.includes('Workshop PC 1'), listed[0]);
          assert.ok(listed[1]!.includes(b.fingerprint) && listed[1]!.includes('impersonation'), listed[1]);
          const list1 = json(await s.cli('client', 'list', '--json')) as Record<string, unknown>[];
          assert.deepEqual(list1.map((c) => [c.id, c.companyId, c.name, c.fingerprint, c.impersonation, c.revoked]), [
            [idA, company, 'Workshop PC 1', a.fingerprint, false, null],
            [infoB.id, company, 'Support desk', b.fingerprint, true, null],
          ]);

          const apiA = server.client(a);
          const apiB = server.client(b);
          try {
            const ok = await apiA.get('/3.0/endpoints');
            assert.equal(ok.status, 200, ok.text);
            assert.ok((ok.envelope.response as string[]).includes('companies'), ok.text);

            assert.deepEqual(json(await s.cli('client', 'revoke', String(idA), '--json')), { id: idA, revoked: true });
            const denied = (r: TestResponse) => {
              assert.equal(r.status, 401, r.text);
              assert.equal(r.errorReply.error, `You do not have access to the API. Your signature: ${a.fingerprint}`);
            };
            denied(await apiA.get('/3.0/endpoints')); // the same keep-alive connection
            const fresh = server.client(a);
            try {
              denied(await fresh.get('/3.0/companies'));
            } finally {
              fresh.close();
            }
            const other = await apiB.get('/3.0/companies');
            assert.equal(other.status, 200, `revoking one certificate leaves the others alone: ${other.text}`);
          } finally {
            apiA.close();
            apiB.close();
          }

          const list2 = json(await s.cli('client', 'list', '--json')) as { id: number; revoked: string | null }[];
          assert.match(String(list2.find((c) => c.id === idA)?.revoked), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
          assert.equal(list2.find((c) => c.id === infoB.id)?.revoked, null);
          assert.match(expectOk(await s.cli('client', 'list')).split('\n')[0]!, /\trevoked \d{4}-\d{2}-\d{2}/);
          expectError(await s.cli('client', 'revoke', String(idA)), new RegExp(`^error: certificate ${idA} was already revoked on `));
          expectError(await s.cli('client', 'revoke', '99999'), /^error: certificate 99999 does not exist\n$/);
          assert.equal(expectOk(await s.cli('client', 'revoke', String(infoB.id))), `revoked certificate ${String(infoB.id)}\n`);

          assert.deepEqual(await server.stop(), { code: 0, signal: null }, `serve exits cleanly on SIGTERM\n${server.stderr}`);
        } finally {
          await server.dispose();
        }
      });
    });

    it('user add creates a user (--json); a duplicate username, a bad level or a bad email is refused', { timeout: 120_000 }, async () => {
      await withStage(kind, async (s) => {
        const c1 = idOf(await s.cli('company', 'add', '--name', 'Acme'));
        const c2 = idOf(await s.cli('company', 'add', '--name', 'Other'));
        const ada = json(await s.cli('user', 'add', '--company', String(c1), '--username', 'ada', '--email', 'ada@example.com', '--level', 'admin', '--json')) as { id: number };
        assert.deepEqual(ada, { id: ada.id, username: 'ada', company_id: c1 });
        const bob = idOf(await s.cli('user', 'add', '--company', String(c2), '--username', 'bob', '--email', 'bob@example.com'));

        // Usernames are unique in the whole system, not per company.
        const [duplicate, badLevel, badEmail, noCompany] = await limited(3, [
          ['--company', String(c2), '--username', 'ada', '--email', 'other@example.com'],
          ['--company', String(c1), '--username', 'eve', '--email', 'eve@example.com', '--level', 'root'],
          ['--company', String(c1), '--username', 'fay', '--email', 'not-an-address'],
          ['--company', '99999', '--username', 'gus', '--email', 'gus@example.com'],
        ].map((args) => () => s.cli('user', 'add', ...args)));
        expectError(duplicate!, /"ada" is already in use/);
        expectUsage(badLevel!, /^--level must be one of readonly, user, admin\n$/);
        expectError(badEmail!, /email/);
        expectError(noCompany!, /^error: company 99999 does not exist\n$/);

        const rows = await withDatabase(s, (db) => db.selectFrom('users').select(['id', 'username', 'email', 'company_id', 'permissions']).orderBy('id').execute());
        // `null` or a missing level means `user`.
        const level = (p: unknown): string => {
          const parsed = (typeof p === 'string' ? JSON.parse(p) : p) as { level?: string } | null;
          return parsed?.level ?? 'user';
        };
        assert.deepEqual(rows.map((r) => [Number(r.id), r.username, r.email, Number(r.company_id), level(r.permissions)]), [
          [ada.id, 'ada', 'ada@example.com', c1, 'admin'],
          [bob, 'bob', 'bob@example.com', c2, 'user'],
        ]);
      });
    });

    it('user add --password-stdin sets a password the user can log in with; a too short one creates nobody', { timeout: 180_000 }, async () => {
      await withStage(kind, async (s) => {
        const company = idOf(await s.cli('company', 'add', '--name', 'Acme'));
        const cert = await certCreate(s, 'imp', 'Helpdesk');
        expectOk(await s.cli('client', 'add', '--company', String(company), '--cert', cert.certFile, '--impersonation'));
        const add = (username: string, stdin: string) => runCli(['user', 'add', '--company', String(company), '--username', username,
          '--email', `${username}@example.com`, '--password-stdin'], s.env(), stdin);
        const carol = idOf(await add('carol', 'correct horse battery staple\n'));
        expectError(await add('dave', 'short\n'), /^error: a password needs \d+ to \d+ characters\n$/);
        const users = await withDatabase(s, (db) => db.selectFrom('users').select(['id', 'username']).execute());
        assert.deepEqual(users.map((u) => [Number(u.id), u.username]), [[carol, 'carol']]);

        const server = await startServe(s);
        try {
          const api = server.client(cert);
          try {
            const r = await api.post('/3.0/login', { username: 'carol', password: 'correct horse battery staple' });
            assert.equal(r.status, 200, r.text);
            assert.equal(r.reply<LoggedIn>().message, 'Authentication successful');
            assert.match(r.reply<LoggedIn>().user_token, /^[0-9a-f]{64}$/);
            const wrong = await api.post('/3.0/login', { username: 'carol', password: 'correct horse battery staple\n' });
            assert.equal(wrong.status, 401, `only the first line of stdin is the password: ${wrong.text}`);
            assert.equal(wrong.errorReply.error, 'Invalid username or password');
          } finally {
            api.close();
          }
          assert.deepEqual(await server.stop(), { code: 0, signal: null }, server.stderr);
        } finally {
          await server.dispose();
        }
      });
    });
  });
}
