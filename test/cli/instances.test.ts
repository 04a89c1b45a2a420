// Several instances on one PostgreSQL: two `serve` processes started
// together on a fresh database share everything that must be shared — the
// migrations (run once), sessions, the login throttle, the rate limit (through
// PostgreSQL, or Redis with REDIS_URL) and the reminder runs (no duplicates).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { addUser, setPassword } from '../../src/admin/accounts.ts';
import type { Database } from '../../src/db/database.ts';
import { addDays, formatDate } from '../../src/model/dates.ts';
import type { TestCert } from '../support/certs.ts';
import type { TestClient } from '../support/client.ts';
import { buildCertificate, buildCompany, buildServerTls, startServe } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { sessionHeader } from '../support/sessions.ts';
import { openStageDatabase, type Server, type Stage, withStage } from '../support/stage.ts';
import type { LoggedIn } from '../support/api.ts';

const RATE = 20;
const SECONDS = 3;

interface Pair { readonly servers: readonly Server[]; readonly database: Database }

/** Two instances on the stage's database, sharing one server certificate; both migrate as they start. */
async function startPair(stage: Stage, env: Record<string, string>): Promise<Pair> {
  const all = { ...buildServerTls(stage).env, RATE_LIMIT: String(RATE), RATE_LIMIT_BURST: String(RATE), ...env };
  const servers = await Promise.all([startServe(stage, { env: all }), startServe(stage, { env: all })]);
  return { servers, database: openStageDatabase(stage) };
}

async function stopPair(pair: Pair | null): Promise<void> {
  if (!pair) return;
  await pair.database.close();
  for (const s of pair.servers) await s.dispose();
}

const clients = (pair: Pair, cert: TestCert) => pair.servers.map((s) => s.client(cert));

/** Sends requests to both instances as fast as they answer for SECONDS; the statuses seen, per instance. */
async function hammer(targets: readonly TestClient[]): Promise<number[][]> {
  const until = Date.now() + SECONDS * 1000;
  const seen: number[][] = targets.map(() => []);
  await Promise.all(targets.flatMap((client, i) => Array.from({ length: 4 }, async () => {
    while (Date.now() < until) seen[i]!.push((await client.get('/3.0/endpoints')).status);
  })));
  return seen;
}

function expectSharedLimit(seen: number[][]): void {
  const allowed = seen.flat().filter((s) => s === 200).length;
  const bound = RATE * 1.1 * SECONDS + RATE;
  assert.ok(allowed <= bound, `${allowed} requests let through by the two instances together, at most ${bound} allowed`);
  assert.ok(allowed >= RATE * SECONDS * 0.6, `only ${allowed} let through: the limit starves the client`);
  for (const statuses of seen) assert.ok(statuses.includes(429), 'each instance refuses too');
  assert.deepEqual(new Set(seen.flat()), new Set([200, 429]));
}

describe('two instances on one PostgreSQL', { skip: !DB_KINDS.includes('postgres') }, () => {
  it('share migrations, sessions, the login throttle, the rate limit and reminder runs', async () => {
    await withStage('postgres', async (stage) => {
      let pair: Pair | null = null;
      try {
        pair = await startPair(stage, { REMINDER_INTERVAL: '1s' });
        const { database } = pair;
        const { rows: applied } = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(database.db);
        assert.equal(new Set(applied.map((r) => r.name)).size, applied.length, 'each migration ran once');

        const company = await buildCompany(database, 'Shared');
        const cert = await buildCertificate(database, company, 'shared', { impersonation: true });
        const [a, b] = clients(pair, cert) as [TestClient, TestClient];
        const userId = await addUser(database, { companyId: company, username: 'shared.user', email: 'u@example.com', level: 'admin' });
        await setPassword(database, userId, 'a long enough password');

        // A session opened on one instance works on the other.
        const login = await a.post('/3.0/login', { username: 'shared.user', password: 'a long enough password' });
        assert.equal(login.status, 200, login.text);
        const onB = await b.get('/3.0/users', { headers: sessionHeader(login.reply<LoggedIn>().user_token) });
        assert.equal(onB.status, 200, onB.text);
        assert.equal(onB.envelope.request.session!.user_id, userId);

        // A failed login on one instance holds the username back on the other.
        assert.equal((await a.post('/3.0/login', { username: 'shared.user', password: 'wrong password!' })).status, 401);
        const held = await b.post('/3.0/login', { username: 'shared.user', password: 'a long enough password' });
        assert.equal(held.status, 429, held.text);
        assert.match(held.errorReply.error, /^Can't retry login this soon after a failed authentication\. Please wait \d+ seconds$/);

        // Due assets: both instances run the reminder job every second; each asset gets one reminder, one message.
        const today = formatDate(new Date());
        for (let i = 0; i < 5; i++) {
          assert.equal((await b.put('/3.0/assets', { asset_no: `due-${i}`, next_check: addDays(today, i) })).status, 201);
        }
        await new Promise((r) => setTimeout(r, 8_000));
        const { rows: [counts] } = await sql<{ reminders: string; messages: string }>`SELECT
          (SELECT COUNT(*) FROM assetreminders) AS reminders, (SELECT COUNT(*) FROM messages) AS messages`.execute(database.db);
        assert.deepEqual([Number(counts!.reminders), Number(counts!.messages)], [5, 5]);
      } finally {
        await stopPair(pair);
      }
    });
  });

  for (const store of ['PostgreSQL', 'Redis'] as const) {
    it(`let one certificate through at most rate × 1.1 × seconds + burst together (counters in ${store})`, async () => {
      await withStage('postgres', async (stage) => {
        let pair: Pair | null = null;
        try {
          pair = await startPair(stage, store === 'Redis' ? { REDIS_URL: 'redis://127.0.0.1:6379' } : {});
          const cert = await buildCertificate(pair.database, await buildCompany(pair.database, 'Limited'), `limited-${store}`);
          expectSharedLimit(await hammer(clients(pair, cert)));
        } finally {
          await stopPair(pair);
        }
      });
    });
  }
});
