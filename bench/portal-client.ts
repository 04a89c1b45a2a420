// The client of the portal workloads (pinned by measure.ts): signs a user in on the
// portal, then in every round asks, one request at a time, the dashboard, the API
// requests that give the same counts and most overdue list, the portal's asset list
// and the API page of the same filter and page — each side timed from sending to the
// last byte of its answer(s), the API's requests summed, the two sides of a pair one
// right after the other. Every answer is checked: the dashboard's counts and list
// against the API's, the list's total and asset numbers against the API page's.
// Reads its job as JSON from argv[2]; prints `MEASURING` after the warm-ups and
// `RESULT <json>` at the end (the pairs' figures in `series`; reqPerSec counts rounds).
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { announceMeasuring, percentile, printResult, type Series } from './result.ts';

/** An API request: its path and, for a list in an order, X-API-Result-Order. */
export interface ApiAsk { readonly path: string; readonly order?: string }

export interface PortalJob {
  readonly apiOrigin: string;
  readonly portalOrigin: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly username: string;
  readonly password: string;
  readonly warmups: number;
  readonly iterations: number;
  /** The API's side of the dashboard: which request's total adds to which count, and the most overdue list. */
  readonly dashboardApi: {
    readonly counts: readonly (ApiAsk & { readonly count: 'Overdue' | 'Due soon' | 'Out of tolerance' | 'Awaiting approval' | 'month' })[];
    /** Next check before the latest of the companies' todays, by next check and asset number. */
    readonly worst: ApiAsk;
    /** company id → its today: an asset of the list is overdue before its company's today. */
    readonly todays: Readonly<Record<string, string>>;
  };
  readonly listPath: string;
  readonly listApi: ApiAsk;
}

interface Answer { readonly status: number; readonly body: string; readonly ms: number; readonly cookie: string | undefined }

function send(agent: https.Agent, origin: string, path: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = https.request({ agent, host: url.hostname, port: url.port, method: o.method ?? 'GET', path, servername: 'localhost', headers: o.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: Number(process.hrtime.bigint() - t0) / 1e6,
        cookie: res.headers['set-cookie']?.[0]?.split(';')[0],
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

interface Envelope {
  readonly pagination?: { readonly total_records: number };
  readonly response: readonly { asset_no: string; company_id: number; next_check: string | null }[];
}

const countOn = (page: string, label: string): number | null => {
  const m = new RegExp(`<strong>(\\d+)</strong>${label}<`).exec(page);
  return m ? Number(m[1]) : null;
};
const assetNumbers = (html: string) => [...html.matchAll(/<a href="\/assets\/\d+">([^<]+)<\/a>/g)].map((m) => m[1]!);

function stats(times: readonly number[]): Series {
  const sorted = [...times].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1]! };
}

async function main(job: PortalJob): Promise<void> {
  const api = new https.Agent({ keepAlive: true, maxSockets: 1, cert: readFileSync(job.certFile), key: readFileSync(job.keyFile), rejectUnauthorized: false });
  const portal = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  const form = new URLSearchParams({ username: job.username, password: job.password }).toString();
  const signIn = await send(portal, job.portalOrigin, '/login', {
    method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(form)) },
  });
  const cookie = signIn.cookie;
  if (signIn.status !== 303 || !cookie?.startsWith('__Host-session=')) throw new Error(`sign-in answered ${signIn.status}: ${signIn.body.slice(0, 200)}`);
  const page = (path: string) => send(portal, job.portalOrigin, path, { headers: { cookie } });
  const ask = (a: ApiAsk) => send(api, job.apiOrigin, a.path, { headers: a.order ? { 'x-api-result-order': a.order } : {} });

  const series: Record<'dashboard' | 'dashboardApi' | 'list' | 'listApi', number[]> = { dashboard: [], dashboardApi: [], list: [], listApi: [] };
  let mismatches = 0;
  let firstMismatch: string | null = null;
  const problem = (text: string) => { mismatches++; firstMismatch ??= text; };
  let bytes = 0;
  let cpu = process.cpuUsage();
  let started = 0;
  for (let i = 0; i < job.warmups + job.iterations; i++) {
    if (i === job.warmups) {
      announceMeasuring();
      cpu = process.cpuUsage();
      started = performance.now();
    }
    const dash = await page('/');
    let apiMs = 0;
    const totals = new Map<string, number>();
    for (const c of job.dashboardApi.counts) {
      const a = await ask(c);
      apiMs += a.ms;
      if (a.status !== 200) problem(`${c.path}: status ${a.status}`);
      else totals.set(c.count, (totals.get(c.count) ?? 0) + ((JSON.parse(a.body) as Envelope).pagination?.total_records ?? 0));
    }
    const worst = await ask(job.dashboardApi.worst);
    apiMs += worst.ms;
    const list = await page(job.listPath);
    const listApi = await ask(job.listApi);
    bytes += dash.body.length + list.body.length;

    if (dash.status !== 200) problem(`dashboard: status ${dash.status}`);
    for (const label of ['Overdue', 'Due soon', 'Out of tolerance', 'Awaiting approval'] as const) {
      if (countOn(dash.body, label) !== (totals.get(label) ?? 0)) problem(`dashboard ${label} ${countOn(dash.body, label)}, the API's ${totals.get(label) ?? 0}`);
    }
    const overdue = (JSON.parse(worst.body) as Envelope).response
      .filter((a) => a.next_check !== null && a.next_check < (job.dashboardApi.todays[String(a.company_id)] ?? '')).slice(0, 20).map((a) => a.asset_no);
    const shown = assetNumbers(dash.body.slice(dash.body.indexOf('id="worst-heading"')));
    if (shown.join() !== overdue.join()) problem(`most overdue ${shown.slice(0, 3).join()}…, the API's ${overdue.slice(0, 3).join()}…`);
    const apiPage = JSON.parse(listApi.body) as Envelope;
    if (list.status !== 200 || listApi.status !== 200) problem(`list: status ${list.status}, the API's ${listApi.status}`);
    else if (!list.body.includes(`${apiPage.pagination?.total_records} assets`)) problem(`the list's total is not the API's ${apiPage.pagination?.total_records}`);
    else if (assetNumbers(list.body).join() !== apiPage.response.map((a) => a.asset_no).join()) problem('the list\'s assets are not the API page\'s');

    if (i < job.warmups) continue;
    series.dashboard.push(dash.ms);
    series.dashboardApi.push(apiMs);
    series.list.push(list.ms);
    series.listApi.push(listApi.ms);
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  api.destroy();
  portal.destroy();
  const dashboard = stats(series.dashboard);
  printResult({
    reqPerSec: job.iterations / seconds, ok: job.iterations - mismatches, seconds,
    bytesPerResponse: bytes / (job.warmups + job.iterations) / 2,
    latencyMs: { p50: dashboard.p50, p90: dashboard.p90, p99: dashboard.p99, max: dashboard.max },
    problems: { non2xx: 0, errors: 0, timeouts: 0, mismatches }, statusCodes: {},
    clientCpuPercent: (100 * (used.user + used.system)) / (seconds * 1e6), firstMismatch,
    series: { dashboard, dashboardApi: stats(series.dashboardApi), list: stats(series.list), listApi: stats(series.listApi) },
  });
}

await main(JSON.parse(process.argv[2]!) as PortalJob);
