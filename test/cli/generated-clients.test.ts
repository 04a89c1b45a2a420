// Clients generated from the served OpenAPI document, as integrators make them: one
// with openapi-typescript + openapi-fetch, one with @hey-api/openapi-ts. Each is
// generated into a temporary directory, its script (test/clients/) typechecked with
// tsc (strict: the types must carry it without a cast), then run against a real
// `asset-tracker serve` over mutual TLS: create, a list with two query filters and a
// page, a read by id, a conditional read (304), update, delete, the change feed and a
// session's login, read and logout.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { addUser, setPassword } from '../../src/admin/accounts.ts';
import { DB_KINDS } from '../support/harness.ts';
import { buildCertificate, buildCompany, buildServerTls, startServe, withStore } from '../support/factories.ts';
import { cleanEnv, ROOT, type Stage, withStage } from '../support/stage.ts';

const run = promisify(execFile);
const USERNAME = 'integrator';
const PASSWORD = 'generated clients 1';

/** A store with one company, a certificate that may open sessions, and a user; the files `serve` and the clients read. */
async function prepare(stage: Stage) {
  const tls = buildServerTls(stage);
  const { cert, userId } = await withStore(stage, async (database) => {
    const companyId = await buildCompany(database, 'Integrators');
    const made = await buildCertificate(database, companyId, 'generated-clients', { impersonation: true });
    const user = await addUser(database, { companyId, username: USERNAME, email: 'integrator@example.com', level: 'admin' });
    await setPassword(database, user, PASSWORD);
    return { cert: made, userId: user };
  });
  const files = { ca: tls.env.TLS_CERT_FILE!, key: tls.env.TLS_KEY_FILE!, clientCert: join(stage.dir, 'client.pem'), clientKey: join(stage.dir, 'client.key') };
  writeFileSync(files.clientCert, cert.certPem);
  writeFileSync(files.clientKey, cert.keyPem);
  return { files, userId, cert, serverPem: tls.certPem, env: { ...tls.env, RATE_LIMIT: '0' } };
}

/** Both clients generated from `doc` into `dir`, beside their scripts, with the project's packages at hand. */
async function generate(dir: string, doc: object): Promise<void> {
  mkdirSync(join(dir, 'openapi-fetch'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  writeFileSync(join(dir, 'openapi-fetch/schema.d.ts'), astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0])));
  const { createClient } = await import('@hey-api/openapi-ts');
  await createClient({ input: join(dir, 'openapi.json'), output: { path: join(dir, 'hey-api') },
    plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'], logs: { level: 'silent' } });
  for (const script of ['openapi-fetch.ts', 'hey-api.ts']) copyFileSync(join(ROOT, 'test/clients', script), join(dir, script));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
      skipLibCheck: true, types: ['node'], lib: ['ES2023', 'DOM'] },
    files: ['openapi-fetch.ts', 'hey-api.ts'],
  }));
}

/** What a script printed: one JSON line. */
async function runScript(dir: string, script: string, env: Record<string, string>): Promise<{ created: number[] } & Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { cwd: dir, env: cleanEnv(env), timeout: 30_000 })
    .catch((e: { stdout?: string; stderr?: string; message: string }) => assert.fail(`${script}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`));
  return JSON.parse(stdout.trim().split('\n').pop()!) as { created: number[] } & Record<string, unknown>;
}

/**
 * Both clients generated from the served document and typechecked, once for the run (the
 * document does not depend on the database): the directory, kept until the file ends.
 */
let generated: Promise<string> | null = null;
const clientsDir = mkdtempSync(join(tmpdir(), 'asset-tracker-clients-'));
after(() => rmSync(clientsDir, { recursive: true, force: true }));

function generatedFrom(served: object): Promise<string> {
  generated ??= (async () => {
    await generate(clientsDir, served);
    // Typechecked as an integrator's project would be: strict, against the generated code.
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(clientsDir, 'tsconfig.json')], { cwd: clientsDir })
      .catch((e: { stdout?: string; message: string }) => assert.fail(`tsc: ${e.message}\n${e.stdout ?? ''}`));
    return clientsDir;
  })();
  return generated;
}

for (const kind of DB_KINDS) describe(`generated clients (${kind})`, () => {
  it('openapi-fetch and hey-api clients typecheck and run against serve over mutual TLS', async () => {
    await withStage(kind, async (stage) => {
      const prepared = await prepare(stage);
      const server = await startServe(stage, prepared);
      try {
        const probe = server.client();
        const served = await probe.get('/openapi.json');
        probe.close();
        assert.equal(served.status, 200);
        const dir = await generatedFrom(served.body as object);

        const env = { API_BASE: server.baseUrl, CA_FILE: prepared.files.ca, CERT_FILE: prepared.files.clientCert,
          KEY_FILE: prepared.files.clientKey, USERNAME, PASSWORD };
        for (const [script, prefix] of [['openapi-fetch.ts', 'OF-'], ['hey-api.ts', 'HA-']] as const) {
          const seen = await runScript(dir, script, { ...env, PREFIX: prefix });
          const [first, second, third] = seen.created;
          assert.deepEqual(seen, {
            created: [first, second, third],
            listed: { assets: [`${prefix}1`, `${prefix}2`], costcodes: ['P-10', 'P-20'], pagination: { total_pages: 1, total_records: 2 } },
            byId: { asset_no: `${prefix}1`, etag: true },
            conditional: { status: 304, data: null },
            updated: { records_updated: 1, records_found: 1 },
            deleted: { records_deleted: 1, records_found: 1 },
            changes: [`${first} created`, `${second} created`, `${third} created`, `${second} updated`, `${third} deleted`],
            session: { user: USERNAME, sessionUser: prepared.userId, logout: 'Session logged out' },
          }, script);
        }
      } finally {
        await server.stop();
      }
    }, 'asset-tracker-clients-');
  });
});
