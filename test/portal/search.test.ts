// The asset list's search: the text matches an asset when its asset number, its
// serial number or its description contains it (case aside), and it combines with
// the filters, the sort and the CSV download; another company's assets never match.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addDays, formatDate } from '../../src/model/dates.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';
import { create } from '../http/resources-support.ts';

const listed = (html: string) => [...html.matchAll(/<a href="\/assets\/\d+">([^<]+)<\/a>/g)].map((m) => m[1]);

for (const kind of DB_KINDS) {
  describe(`portal asset search (${kind})`, () => {
    let svc: PortalService;
    let browser: Browser;
    before(async () => {
      svc = await startPortal(kind);
      const today = formatDate(svc.clock.now());
      const acme = await svc.company('Acme');
      const other = await svc.company('Other');
      const api = (await svc.certificate(acme)).client;
      const otherApi = (await svc.certificate(other)).client;
      const asset = (asset_no: string, serial_no: string, description: string, days: number, status = 'Active') =>
        create(api, 'assets', { asset_no, serial_no, description, status, next_check: addDays(today, days) });
      await asset('GAUGE-7', 'S-100', 'Pressure gauge', 10);
      await asset('M-2', 'GAUGE-SN-9', 'Multimeter', 40);
      await asset('M-3', 'X-1', 'Differential gauge', 400, 'Spare');
      await asset('M-4', 'X-2', 'Torque wrench', 5);
      await asset('M-5', 'X-3', '50% buffer_gauge', 20);
      await create(otherApi, 'assets', { asset_no: 'GAUGE-THEIRS', serial_no: 'gauge', description: 'gauge', next_check: addDays(today, 1) });
      const user = await portalUser(svc, acme);
      browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
    });
    after(() => svc.close());

    it('matches asset number, serial number or description, any case, in the chosen order', async () => {
      const page = await browser.get('/assets?q=GaUgE');
      assert.equal(page.status, 200);
      assert.match(page.text, /4 assets/);
      assert.deepEqual(listed(page.text), ['GAUGE-7', 'M-2', 'M-3', 'M-5']);
      assert.ok(!page.text.includes('GAUGE-THEIRS'));
      assert.ok(!page.text.includes('name="in"'), 'no choice of field any more');
      const byDescription = await browser.get('/assets?q=gauge&sort=description&dir=desc');
      assert.deepEqual(listed(byDescription.text), ['GAUGE-7', 'M-2', 'M-3', 'M-5']);
    });

    it('% and _ are plain characters, and a search with no match lists none', async () => {
      assert.deepEqual(listed((await browser.get(`/assets?q=${encodeURIComponent('50% buffer_')}`)).text), ['M-5']);
      assert.deepEqual(listed((await browser.get('/assets?q=g%25ge')).text), []);
      assert.match((await browser.get('/assets?q=nothing-like-it')).text, /No assets match/);
    });

    it('combines with the filters (all must hold), and the CSV link downloads the same selection', async () => {
      const page = await browser.get('/assets?q=gauge&status=active&sort=next_check&dir=desc');
      assert.deepEqual(listed(page.text), ['M-2', 'M-5', 'GAUGE-7']);
      const link = /href="(\/assets\.csv[^"]*)"/.exec(page.text)![1]!.replaceAll('&amp;', '&');
      assert.match(link, /q=gauge/);
      const csv = await browser.get(link);
      assert.equal(csv.status, 200);
      const [header, ...lines] = csv.text.trim().split('\n');
      const column = header!.split(',').indexOf('asset_no');
      assert.deepEqual(lines.map((l) => l.split(',')[column]), ['M-2', 'M-5', 'GAUGE-7']);
      const due = await browser.get(`/assets?q=gauge&due_before=${addDays(formatDate(svc.clock.now()), 30)}`);
      assert.deepEqual(listed(due.text), ['GAUGE-7', 'M-5']);
    });
  });
}
