// The portal's everyday flows in a real browser (Debian's Chromium through playwright-core)
// against a real `serve` process, on each engine: signing in (a wrong password first), the
// dashboard's counts against the API's for the same user, searching and filtering the asset
// list, an asset's check history and its certificate downloaded, a check recorded with two
// points, a queue request, a message marked read, a password changed; a readonly user offered
// no changing form, another company's asset a missing one, a form without its token refused
// with nothing changed, and each company's name and colour on its own subdomain.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { setCompany } from '../../src/admin/company.ts';
import { addDays, addMonths, formatDate } from '../../src/model/dates.ts';
import type { LoggedIn } from '../support/api.ts';
import type { TestCert } from '../support/certs.ts';
import type { TestClient } from '../support/client.ts';
import { buildCertificate, buildCompany, prepareServe, startServe, withStore } from '../support/factories.ts';
import { CHROMIUM, chromiumMissing } from '../support/chromium.ts';
import { DB_KINDS } from '../support/harness.ts';
import { createStage, freePort, type Server, type Stage } from '../support/stage.ts';
import { person, type Person, portalPages, WAIT_MS } from '../support/portal-browser.ts';
import { sessionHeader } from '../support/workflows.ts';
import { create, one } from '../http/resources-support.ts';

const missing = chromiumMissing('The portal\'s flows are not tried in a browser');

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))]);
const BRANDS = { a: { name: 'Alpha Instruments', primary: '#0a5c36', rgb: 'rgb(10, 92, 54)' },
  b: { name: 'Beta Works', primary: '#7a1f5c', rgb: 'rgb(122, 31, 92)' } } as const;

for (const kind of DB_KINDS) {
  describe(`the portal's flows in a browser against serve (${kind})`, { skip: missing }, () => {
    const today = formatDate(new Date());
    let stage: Stage;
    let server: Server;
    let portal: number;
    let browser: Browser;
    let api: TestClient;
    let impersonating: TestCert;
    let user: Person, reader: Person, outsider: Person;
    let gauge: number, theirs: number, message: number, readerMessage: number;
    before(async () => {
      stage = await createStage(kind, 'asset-tracker-flows-');
      const served = await prepareServe(stage, 'flows client');
      const made = await withStore(stage, async (database) => {
        // prepareServe's company ('Top', whose certificate `served.cert` is) becomes company A.
        const a = Number((await database.db.selectFrom('companies').select('id').where('name', '=', 'Top').executeTakeFirstOrThrow()).id);
        await setCompany(database, a, { name: BRANDS.a.name, subdomain: 'a' });
        const b = await buildCompany(database, 'Other');
        await setCompany(database, b, { name: BRANDS.b.name, subdomain: 'b' });
        for (const [id, brand] of [[a, BRANDS.a], [b, BRANDS.b]] as const) {
          await database.db.updateTable('companies').set({ styles: JSON.stringify({ primary_color: brand.primary }) }).where('id', '=', id).execute();
        }
        return { user: await person(database, a, 'alpha.user'), reader: await person(database, a, 'alpha.reader', 'readonly'),
          outsider: await person(database, b, 'beta.user'), impersonating: await buildCertificate(database, a, 'flows login', { impersonation: true }),
          bCert: await buildCertificate(database, b, 'beta client') };
      });
      ({ user, reader, outsider, impersonating } = made);
      server = await startServe(stage, { env: { ...served.env, PORTAL_PORT: String(await freePort()) } });
      portal = server.portalPort ?? assert.fail('serve has no portal port');
      api = server.client(served.cert);
      const bApi = server.client(made.bCert);
      try {
        theirs = await create(bApi, 'assets', { asset_no: 'GAUGE-B', description: 'Gauge of another company', next_check: addDays(today, -5) });
      } finally {
        bApi.close();
      }
      // Company A: GAUGE-1 overdue (its last check a pass 400 days ago) with its certificate; GAUGE-2 due soon and spare;
      // METER-3 out of tolerance; one request awaiting approval; a message for the user and one for the readonly user.
      gauge = await create(api, 'assets', { asset_no: 'GAUGE-1', serial_no: 'S-100', description: 'Pressure gauge', status: 'Active', period: 12 });
      await create(api, 'assetchecks', { asset_id: gauge, check_date: addDays(today, -400), check_type: 'calibration', result: 'pass',
        performed_by: 'Old Lab', certificate_no: 'OLD-1' });
      await create(api, 'assets', { asset_no: 'GAUGE-2', serial_no: 'S-200', description: 'Differential gauge', status: 'Spare', next_check: addDays(today, 10) });
      const meter = await create(api, 'assets', { asset_no: 'METER-3', serial_no: 'S-300', description: 'Multimeter', period: 6, next_check: addDays(today, 100) });
      await create(api, 'assetchecks', { asset_id: meter, check_date: addDays(today, -2), check_type: 'calibration', result: 'fail' });
      const file = await create(api, 'files', { asset_id: gauge, description: 'Calibration certificate', filename: 'GAUGE-1-certificate.pdf' });
      const token = String((await one(api, 'files', file)).upload_endpoint).split('/').pop()!;
      const uploaded = await api.post(`/3.0/upload/${token}`, PDF, { headers: { 'content-type': 'application/pdf' } });
      assert.equal(uploaded.status, 200, uploaded.text);
      await create(api, 'assetqueue', { description: 'Existing request' });
      message = await create(api, 'messages', { messagetext: 'Please calibrate GAUGE-1', target_user_id: user.id });
      readerMessage = await create(api, 'messages', { messagetext: 'For your information', target_user_id: reader.id });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--host-resolver-rules=MAP *.example.test 127.0.0.1'] });
    }, { timeout: 120_000 });
    after(async () => {
      await browser?.close();
      api?.close();
      await server?.stop().catch(() => server.dispose());
      await stage?.dispose();
    }, { timeout: 60_000 });

    const url = (path: string, host = 'localhost') => `https://${host}:${portal}${path}`;

    const { newPage, submit, signIn, signInAgain, alertOf, fieldOf, listed } = portalPages(() => browser, url, WAIT_MS);

    /** How many records of an API list (over mTLS, as company A's certificate) the path's filters match. */
    async function total(path: string): Promise<number> {
      const res = await api.get(`/3.0/${path}`);
      assert.equal(res.status, 200, res.text);
      return res.envelope.pagination?.total_records ?? 0;
    }

    let page: Page;
    it('a wrong password is refused; the right one opens the dashboard, whose counts are the API\'s for the same user', { timeout: 60_000 }, async () => {
      page = await newPage();
      await signIn(page, { username: user.username, password: 'not the password' });
      assert.equal(page.url(), url('/login'));
      assert.equal(await alertOf(page), 'Invalid username or password');
      await signInAgain(page, user);
      assert.equal(page.url(), url('/'));
      assert.equal(await page.title(), `Dashboard — ${BRANDS.a.name}`);
      const count = async (kind: string) => Number(await page.locator(`.counts a.count.${kind} strong`).innerText());
      const shown = [await count('overdue'), await count('due'), await count('fail'), await count('queue')];

      const client = server.client(impersonating);
      try {
        const login = await client.post('/3.0/login', { username: user.username, password: user.password });
        assert.equal(login.status, 200, login.text);
        const token = login.reply<LoggedIn>().user_token;
        const session = async (path: string) => {
          const res = await client.get(`/3.0/${path}`, { headers: sessionHeader(token) });
          assert.equal(res.status, 200, res.text);
          return res.envelope.pagination?.total_records ?? 0;
        };
        const byApi = [await session(`assets/next_check<${today}`), await session(`assets/next_check+${today}/next_check-${addDays(today, 30)}`),
          await session('assets/last_result=fail'), await session('assetqueue/released=0')];
        assert.deepEqual(shown, byApi, 'overdue, due soon, out of tolerance, awaiting approval');
        assert.deepEqual(shown, [1, 1, 1, 1], 'GAUGE-1 overdue, GAUGE-2 due, METER-3 failed, one request');
      } finally {
        client.close();
      }
    });

    it('searches the asset list by typing, then narrows it with a filter', { timeout: 60_000 }, async () => {
      await page.goto(url('/assets'));
      assert.deepEqual(await listed(page), ['GAUGE-1', 'GAUGE-2', 'METER-3']);
      await page.getByRole('searchbox', { name: 'Search' }).fill('gauge');
      await submit(page, page.getByRole('button', { name: 'Show assets' }));
      assert.match(page.url(), /[?&]q=gauge(&|$)/);
      assert.deepEqual(await listed(page), ['GAUGE-1', 'GAUGE-2'], 'the other company\'s GAUGE-B never matches');
      assert.match(await page.locator('p.pager').first().innerText(), /^2 assets/);
      await page.getByLabel('Status').fill('Spare');
      await submit(page, page.getByRole('button', { name: 'Show assets' }));
      assert.deepEqual(await listed(page), ['GAUGE-2']);
      assert.match(await page.locator('p.pager').first().innerText(), /^1 assets/);
    });

    it('opens an asset with its check history and downloads its certificate, byte for byte', { timeout: 60_000 }, async () => {
      await page.goto(url('/assets'));
      await submit(page, page.getByRole('link', { name: 'GAUGE-1', exact: true }));
      assert.equal(page.url(), url(`/assets/${gauge}`));
      assert.equal(await page.locator('h1').innerText(), 'Asset GAUGE-1');
      const old = page.getByRole('region', { name: `Check of ${addDays(today, -400)}`, exact: true });
      assert.match(await old.locator('h3').innerText(), /calibration · result pass$/);
      assert.match(await old.innerText(), /By Old Lab · certificate OLD-1/);
      const [download] = await Promise.all([page.waitForEvent('download'),
        page.getByRole('link', { name: 'Download GAUGE-1-certificate.pdf' }).click()]);
      assert.equal(download.suggestedFilename(), 'GAUGE-1-certificate.pdf');
      assert.ok(readFileSync(await download.path()).equals(PDF), 'the downloaded file is the uploaded one');
    });

    it('records a check with two points: verdicts first, then saved; the asset\'s last and next check move', { timeout: 60_000 }, async () => {
      await page.goto(url(`/assets/${gauge}`));
      const before = { last: await fieldOf(page, 'Last check'), next: await fieldOf(page, 'Next check') };
      assert.deepEqual(before, { last: addDays(today, -400), next: addMonths(addDays(today, -400), 12) });
      await submit(page, page.getByRole('link', { name: 'Record a check' }));
      assert.equal(page.url(), url(`/assets/${gauge}/checks/new`));
      await page.getByLabel('Performed by').fill('Browser Lab');
      await page.getByLabel('Certificate number').fill('BR-1');
      const points = [['10 bar', '9.9', '10.1', '10.0'], ['20 bar', '19.8', '20.2', '20.1']] as const;
      for (const [i, [name, lower, upper, found]] of points.entries()) {
        for (const [what, value] of [['name', name], ['unit', 'bar'], ['lower limit', lower], ['upper limit', upper], ['as found', found]] as const) {
          await page.getByLabel(`Point ${i + 1} ${what}`, { exact: true }).fill(value);
        }
      }
      await submit(page, page.getByRole('button', { name: 'Show verdicts' }));
      assert.match(await page.getByRole('status').innerText(), /With these points the check's result is pass\./);
      assert.equal(await page.locator('tbody .verdict-pass').count(), 2);
      await submit(page, page.getByRole('button', { name: 'Save check' }));
      assert.equal(page.url(), url(`/assets/${gauge}`));
      const next = addMonths(today, 12)!;
      assert.deepEqual({ last: await fieldOf(page, 'Last check'), next: await fieldOf(page, 'Next check') }, { last: today, next });
      const check = page.getByRole('region', { name: `Check of ${today}`, exact: true });
      assert.match(await check.innerText(), new RegExp(`By Browser Lab · certificate BR-1 · next check set to ${next}`));
      assert.equal(await check.locator('tbody tr').count(), 2);
    });

    it('requests a new asset on the queue page and sees it listed', { timeout: 60_000 }, async () => {
      await page.goto(url('/queue'));
      await page.getByLabel('Description').fill('Torque wrench from the browser');
      await page.getByLabel('Asset number').fill('TW-BR');
      await page.getByLabel('Check interval (months)').fill('12');
      await submit(page, page.getByRole('button', { name: 'Request asset' }));
      assert.equal(page.url(), url('/queue?requested=1'));
      assert.equal(await page.getByRole('status').innerText(), 'Your request is in the queue, awaiting approval.');
      assert.match(await page.getByRole('main').innerText(), /2 requests awaiting approval\./);
      assert.equal(await page.getByRole('row').filter({ hasText: 'Torque wrench from the browser' }).locator('td').nth(1).innerText(), 'TW-BR');
    });

    it('marks a message read', { timeout: 60_000 }, async () => {
      await page.goto(url('/messages'));
      const row = page.getByRole('row').filter({ hasText: 'Please calibrate GAUGE-1' });
      assert.match(await row.innerText(), /Unread/);
      await submit(page, row.getByRole('button', { name: `Mark message ${message} read` }));
      assert.equal(page.url(), url('/messages'));
      assert.equal(await row.locator('td').last().innerText(), 'Read');
      assert.equal(await page.getByRole('button', { name: `Mark message ${message} read` }).count(), 0);
    });

    it('changes the password, signs out, and signs in with the new one alone', { timeout: 60_000 }, async () => {
      await page.goto(url('/account'));
      const fresh = `${user.password} renewed`;
      await page.getByLabel('Current password').fill(user.password);
      await page.getByLabel('New password').fill(fresh);
      await submit(page, page.getByRole('button', { name: 'Change password' }));
      assert.equal(page.url(), url('/account?changed=1'));
      assert.match(await page.getByRole('status').first().innerText(), /^Your password was changed\./);
      await page.goto(url('/logout'));
      await submit(page, page.getByRole('main').getByRole('button', { name: 'Sign out' }));
      assert.equal(page.url(), url('/login'));
      await page.goto(url('/'));
      assert.equal(page.url(), url('/login'), 'signed out');
      await signIn(page, user);
      assert.equal(await alertOf(page), 'Invalid username or password', 'the old password no longer works');
      user.password = fresh;
      await signInAgain(page, user);
      assert.equal(page.url(), url('/'));
    });

    it('a form sent without its token is refused with 403 and changes nothing', { timeout: 60_000 }, async () => {
      const queued = await total('assetqueue/released=0');
      const res = await page.request.post(url('/queue'), { form: { description: 'Sent without the token' }, maxRedirects: 0 });
      assert.equal(res.status(), 403);
      assert.match(await res.text(), /This form has expired or did not come from this site\. Nothing was changed/);
      assert.equal(await total('assetqueue/released=0'), queued);
      await page.goto(url('/queue'));
      assert.equal(await page.getByRole('row').filter({ hasText: 'Sent without the token' }).count(), 0);
      await page.context().close();
    });

    it('a readonly user is offered no form that changes anything, and one sent anyway changes nothing', { timeout: 60_000 }, async () => {
      const own = await newPage();
      await signIn(own, reader);
      assert.equal(own.url(), url('/'));
      for (const path of ['/', '/assets', `/assets/${gauge}`, '/queue']) {
        await own.goto(url(path));
        assert.equal(await own.locator('form[method="post"]').count(), 0, `${path} has no changing form`);
      }
      assert.equal(await own.getByRole('link', { name: 'Record a check' }).count(), 0);
      const form = await own.goto(url(`/assets/${gauge}/checks/new`));
      assert.equal(form?.status(), 403);
      assert.equal(await own.getByRole('button', { name: 'Save check' }).count(), 0);
      assert.match(await alertOf(own), /Access denied: PUT on assetchecks requires user/);
      await own.goto(url('/queue'));
      assert.equal(await own.getByRole('button', { name: 'Request asset' }).count(), 0);
      const queued = await total('assetqueue/released=0');
      await own.goto(url('/account'));
      const csrf = await own.locator('input[name="csrf"]').first().inputValue();
      const sent = await own.request.post(url('/queue'), { form: { csrf, description: 'Asked by a reader' }, maxRedirects: 0 });
      assert.equal(sent.status(), 403);
      assert.match(await sent.text(), /Access denied: PUT on assetqueue requires user/);
      assert.equal(await total('assetqueue/released=0'), queued);
      const marked = await own.request.post(url(`/messages/${readerMessage}/read`), { form: { csrf }, maxRedirects: 0 });
      assert.equal(marked.status(), 403);
      assert.match(await marked.text(), /Access denied: POST on messages requires user/);
      await own.goto(url('/messages'));
      assert.match(await own.getByRole('row').filter({ hasText: 'For your information' }).innerText(), /Unread/, 'still unread');
      await own.context().close();
    });

    it('a readonly user is offered no Mark read button', { timeout: 60_000 }, async () => {
      const own = await newPage();
      await signIn(own, reader);
      await own.goto(url('/messages'));
      assert.equal(await own.getByRole('row').filter({ hasText: 'For your information' }).count(), 1);
      const buttons = await own.getByRole('button', { name: /^Mark message \d+ read$/ }).count();
      await own.context().close();
      assert.equal(buttons, 0);
    });

    it('a user of another company gets the missing page for this company\'s asset', { timeout: 60_000 }, async () => {
      const other = await newPage();
      await signIn(other, outsider);
      assert.equal(other.url(), url('/'));
      assert.equal((await other.goto(url(`/assets/${theirs}`)))?.status(), 200, 'their own asset opens');
      const res = await other.goto(url(`/assets/${gauge}`));
      assert.equal(res?.status(), 404);
      assert.equal(await other.locator('h1').innerText(), 'Not found');
      assert.equal(await alertOf(other), `Asset ${gauge} does not exist`);
      assert.equal(await other.getByText('GAUGE-1').count(), 0);
      await other.context().close();
    });

    it('each subdomain shows its own company\'s name and colour', { timeout: 60_000 }, async () => {
      const visitor = await newPage();
      for (const [label, brand] of Object.entries(BRANDS)) {
        const res = await visitor.goto(url('/login', `${label}.example.test`));
        assert.equal(res?.status(), 200);
        assert.equal(await visitor.title(), `Sign in — ${brand.name}`);
        assert.equal(await visitor.locator('header .site').innerText(), brand.name);
        assert.equal(await visitor.locator('header.top').evaluate((e) => getComputedStyle(e).backgroundColor), brand.rgb);
      }
      await signIn(visitor, outsider, 'a.example.test');
      assert.equal(await alertOf(visitor), 'Invalid username or password', 'company A\'s address lets no user of company B in');
      await visitor.context().close();
    });
  });
}
