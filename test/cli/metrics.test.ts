// The operator's view of a running `serve`: Prometheus metrics on their own plain-HTTP
// listener (METRICS_PORT, loopback by default), and one JSON log line per request
// that says who called and how it ended — with no password or session token in the
// log. A real child process on each engine, real requests, a real scrape.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { describe, it } from 'node:test';
import { addUser, setPassword } from '../../src/admin/accounts.ts';
import { buildCertificate, buildCompany, startServe, withStore } from '../support/factories.ts';
import { DB_KINDS } from '../support/harness.ts';
import { type Family, parseExposition, valueOf } from '../support/prometheus.ts';
import { freePort, runCli, withStage } from '../support/stage.ts';
import type { LoggedIn } from '../support/api.ts';

const PASSWORD = 'correct-horse-battery-9';

function scrape(port: number, path = '/metrics'): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (s: string) => { text += s; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }));
    }).on('error', reject);
  });
}

async function metrics(port: number): Promise<Map<string, Family>> {
  const r = await scrape(port);
  assert.equal(r.status, 200, r.text);
  assert.match(r.type, /^text\/plain; version=0\.0\.4/);
  return parseExposition(r.text);
}

/** Opens `n` plain TCP connections and reports how many the server closed at once. */
async function connectionsClosedAtOnce(port: number, n: number): Promise<number> {
  const sockets = await Promise.all(Array.from({ length: n }, () => new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  })));
  await new Promise((r) => setTimeout(r, 500));
  const closed = sockets.filter((s) => s.destroyed || s.readableEnded).length;
  for (const s of sockets) s.destroy();
  return closed;
}

for (const kind of DB_KINDS) {
  describe(`metrics and request logs of a running serve (${kind})`, () => {
    it('serves the families with bounded labels on METRICS_PORT only, and logs one line per request without secrets', { timeout: 120_000 }, async () => {
      await withStage(kind, async (stage) => {
        const { company, cert, userId } = await withStore(stage, async (database) => {
          const company = await buildCompany(database, 'Metrics Ltd');
          const cert = await buildCertificate(database, company, 'metrics-client', { impersonation: true });
          const userId = await addUser(database, { companyId: company, username: 'mia', email: 'mia@example.com', level: 'admin' });
          await setPassword(database, userId, PASSWORD);
          return { company, cert, userId };
        });

        const metricsPort = await freePort();
        const server = await startServe(stage, { env: {
          METRICS_PORT: String(metricsPort), LOG_LEVEL: 'info', RATE_LIMIT: '1', RATE_LIMIT_BURST: '12', MAX_CONNECTIONS_PER_ADDRESS: '4',
        } });
        try {
          const api = server.client(cert);
          assert.equal((await api.get('/3.0/companies')).status, 200);
          assert.equal((await api.get(`/3.0/companies/id=${company}`)).status, 200);
          assert.equal((await api.get('/3.0/no-such-endpoint/id=1')).status, 404);
          const login = await api.post('/3.0/login', { username: 'mia', password: PASSWORD });
          assert.equal(login.status, 200, login.text);
          const token: string = login.reply<LoggedIn>().user_token;
          const authorization = `Basic ${Buffer.from(`session:${token}`).toString('base64')}`;
          assert.equal((await api.get('/3.0/users', { headers: { authorization } })).status, 200);
          // A webhook to a loopback address: its first delivery attempt is refused by the address rule and retried.
          assert.equal((await api.put('/3.0/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['*'] })).status, 201);
          // The mTLS port has no metrics: /metrics there is an unknown API path.
          const onApiPort = await api.get('/metrics');
          assert.equal(onApiPort.status, 404);
          assert.doesNotMatch(onApiPort.text, /asset_tracker_/);
          // Past the burst: refusals.
          const statuses = [];
          for (let i = 0; i < 20; i++) statuses.push((await api.get('/3.0/endpoints')).status);
          assert.ok(statuses.includes(429), `some of ${statuses.join(',')} are 429`);
          api.close();
          await new Promise((r) => setTimeout(r, 300));
          const closedByLimit = await connectionsClosedAtOnce(server.port, 8);
          assert.ok(closedByLimit >= 1, 'connections beyond MAX_CONNECTIONS_PER_ADDRESS are closed at once');

          assert.equal((await scrape(metricsPort, '/other')).status, 404);
          // The first reminder run comes a few seconds after the start.
          let m = await metrics(metricsPort);
          for (const deadline = Date.now() + 30_000; valueOf(m, 'asset_tracker_reminder_runs_total') === 0;) {
            assert.ok(Date.now() < deadline, 'a reminder run within 30 s of the start');
            await new Promise((r) => setTimeout(r, 500));
            m = await metrics(metricsPort);
          }

          // Requests: by endpoint name, verb and status; unknown endpoints and paths collapse to one label.
          const requests = 'asset_tracker_http_requests_total';
          assert.equal(m.get(requests)?.type, 'counter');
          assert.equal(valueOf(m, requests, { endpoint: 'companies', verb: 'GET', status: '200' }), 2);
          assert.equal(valueOf(m, requests, { endpoint: 'login', verb: 'POST', status: '200' }), 1);
          assert.equal(valueOf(m, requests, { endpoint: 'users', verb: 'GET', status: '200' }), 1);
          assert.equal(valueOf(m, requests, { endpoint: 'unknown', verb: 'GET', status: '404' }), 2);
          assert.ok(valueOf(m, requests, { endpoint: 'healthz', verb: 'GET', status: '200' }) >= 1);
          const refused = statuses.filter((s) => s === 429).length;
          assert.equal(valueOf(m, requests, { endpoint: 'endpoints', status: '429' }), refused);
          assert.equal(valueOf(m, requests, { endpoint: 'endpoints', status: '200' }), 20 - refused);
          const labelled = new Set(m.get(requests)!.samples.map((s) => s.labels.endpoint));
          assert.deepEqual([...labelled].sort(), ['companies', 'endpoints', 'healthz', 'login', 'unknown', 'users', 'webhooks'], 'endpoint names, never paths');
          for (const s of m.get(requests)!.samples) {
            assert.match(s.labels.verb!, /^(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH|OTHER)$/);
            assert.match(s.labels.status!, /^[1-5]\d\d$/);
          }
          const duration = 'asset_tracker_http_request_duration_seconds';
          assert.equal(m.get(duration)?.type, 'histogram');
          assert.equal(valueOf(m, duration, { endpoint: 'companies', verb: 'GET', status: '200' }, `${duration}_count`), 2);
          assert.equal(valueOf(m, duration, { endpoint: 'companies', verb: 'GET', status: '200', le: '+Inf' }, `${duration}_bucket`), 2);
          assert.ok(valueOf(m, duration, { endpoint: 'companies' }, `${duration}_sum`) > 0);
          assert.equal(m.get('asset_tracker_http_requests_in_flight')?.type, 'gauge');
          assert.equal(valueOf(m, 'asset_tracker_http_requests_in_flight'), 0, 'every request that ended left the in-flight gauge');

          assert.equal(valueOf(m, 'asset_tracker_rate_limit_refusals_total'), refused);
          assert.ok(valueOf(m, 'asset_tracker_connections_closed_total', { listener: 'https', reason: 'over_address' }) >= closedByLimit);

          // The database: statement cache, pool, waits.
          assert.ok(valueOf(m, 'asset_tracker_statement_cache_lookups_total', { result: 'hit' }) > 0);
          assert.ok(valueOf(m, 'asset_tracker_statement_cache_lookups_total', { result: 'miss' }) > 0);
          const engine = { engine: kind };
          assert.equal(valueOf(m, 'asset_tracker_db_pool_max', engine), kind === 'sqlite' ? 1 : 10);
          assert.ok(valueOf(m, 'asset_tracker_db_pool_size', engine) >= 1);
          assert.ok(valueOf(m, 'asset_tracker_db_pool_idle', engine) >= 0);
          assert.equal(valueOf(m, 'asset_tracker_db_pool_waiting', engine), 0);
          assert.ok(valueOf(m, 'asset_tracker_db_pool_wait_seconds', engine, 'asset_tracker_db_pool_wait_seconds_count') > 0);

          // Webhooks: the refused attempt, and the retry it left waiting.
          for (const deadline = Date.now() + 30_000; valueOf(m, 'asset_tracker_webhook_attempts_total', { result: 'retrying' }) === 0;) {
            assert.ok(Date.now() < deadline, 'a webhook delivery attempt within 30 s');
            await new Promise((r) => setTimeout(r, 500));
            m = await metrics(metricsPort);
          }
          assert.equal(m.get('asset_tracker_webhook_attempts_total')?.type, 'counter');
          assert.equal(valueOf(m, 'asset_tracker_webhook_attempts_total', { result: 'delivered' }), 0);
          assert.equal(m.get('asset_tracker_webhook_backlog')?.type, 'gauge');
          assert.ok(valueOf(m, 'asset_tracker_webhook_backlog') >= 1, 'the retry waits in the backlog');

          // The reminder run, and the process.
          assert.ok(valueOf(m, 'asset_tracker_reminder_runs_total', { outcome: 'complete' }) >= 1);
          assert.ok(valueOf(m, 'asset_tracker_reminder_last_run_timestamp_seconds') > Date.now() / 1000 - 120);
          for (const family of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
            assert.ok(m.has(family), `default process metric ${family}`);
          }

          // `asset-tracker openapi` prints what the server serves (one engine shows it: no database is involved).
          if (kind === 'sqlite') {
            const anonymous = server.client();
            const served = await anonymous.get('/openapi.json');
            anonymous.close();
            const printed = await runCli(['openapi', '--json'], stage.env({ BASE_URL: server.baseUrl }));
            assert.equal(printed.code, 0, printed.stderr);
            assert.deepEqual(JSON.parse(printed.stdout), served.body);
          }

          const exit = await server.stop();
          assert.equal(exit.code, 0, server.stderr);

          // The log: JSON lines; exactly one per request, with who called and how it ended.
          const lines = server.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
          const listening = lines.find((l) => l.msg === 'metrics listening on plain HTTP (GET /metrics)');
          assert.equal(listening?.address, '127.0.0.1', 'METRICS_HOST defaults to loopback');
          assert.equal(listening?.port, metricsPort);
          assert.ok(!lines.some((l) => l.msg === 'incoming request' || l.msg === 'request completed'), 'one line per request, not two');
          const requestLines = lines.filter((l) => l.msg === 'request');
          const ids = requestLines.map((l) => l.reqId);
          assert.equal(new Set(ids).size, ids.length, 'one line per request id');
          const usersLine = requestLines.find((l) => l.endpoint === 'users');
          assert.ok(usersLine, server.stdout);
          assert.equal(typeof usersLine.reqId, 'string');
          assert.equal(usersLine.cert, cert.fingerprint.slice(0, 16));
          assert.equal(usersLine.user, userId);
          assert.equal(usersLine.verb, 'GET');
          assert.equal(usersLine.status, 200);
          assert.equal(typeof usersLine.ms, 'number');
          assert.equal(usersLine.url, '/3.0/users');
          const loginLine = requestLines.find((l) => l.endpoint === 'login');
          assert.deepEqual([loginLine?.verb, loginLine?.status, loginLine?.user, loginLine?.cert], ['POST', 200, null, cert.fingerprint.slice(0, 16)]);
          assert.ok(requestLines.some((l) => l.endpoint === 'unknown' && l.status === 404 && l.url === '/3.0/no-such-endpoint/id=1'));
          assert.equal(requestLines.filter((l) => l.endpoint === 'endpoints').length, 20);

          const everything = server.stdout + server.stderr;
          for (const secret of [PASSWORD, token, authorization, Buffer.from(`session:${token}`).toString('base64')]) {
            assert.ok(!everything.includes(secret), `the log holds a secret: ${secret}`);
          }
        } finally {
          await server.dispose();
        }
      });
    });
  });
}
