// The portal in a real browser (Debian's Chromium through playwright-core): signing
// in with the keyboard alone, every page at 1280 px and at 375 px wide with no axe-core
// violation (WCAG 2.1 A and AA), one h1, a title naming the page and the company, no
// sideways scrolling of the page, nothing the CSP blocks; and, with SCREENSHOTS=1
// (npm run screenshots), the guide's pictures in docs/screenshots/.
import { AxeBuilder } from '@axe-core/playwright';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { labelSecret, statusToken } from '../../src/admin/labels.ts';
import { DEMO_USER, seedDemo } from '../../src/cli/demo-data.ts';
import { BlobStore } from '../../src/storage/blobs.ts';
import { CHROMIUM, chromiumMissing } from '../support/chromium.ts';
import { type PortalService, startPortal } from '../support/portal.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHOTS = join(ROOT, 'docs/screenshots');
const missing = chromiumMissing('The portal is not tried in a browser');

const WIDTHS = [1280, 375] as const;
const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

describe('the portal in a browser', { skip: missing }, () => {
  let svc: PortalService;
  let browser: Browser;
  let dir: string;
  let password: string;
  let calibrated: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asset-tracker-portal-'));
    mkdirSync(join(dir, 'demo'));
    svc = await startPortal('sqlite', { blobs: new BlobStore(join(dir, 'files')) });
    ({ password } = await seedDemo(svc.database, dir, svc.clock, svc.baseUrl));
    const row = await svc.database.db.selectFrom('assets' as never).select('id' as never).where('asset_no' as never, '=', 'CAL-01' as never)
      .executeTakeFirst() as { id: number } | undefined;
    calibrated = Number(row!.id);
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    await browser?.close();
    await svc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const url = (path: string) => `https://localhost:${svc.portalPort}${path}`;

  /** A new browser window at the given width, with CSP violations and page errors collected. */
  async function window(width: number): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width, height: 900 }, serviceWorkers: 'block' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    return { page, problems };
  }

  /** Signs in with the keyboard alone: Tab to each field, type, Enter. */
  async function signInByKeyboard(page: Page): Promise<void> {
    await page.goto(url('/login'));
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.id)) !== 'username'; i++) await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'username', 'the username field is reachable by Tab');
    await page.keyboard.type(DEMO_USER);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'password');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await page.waitForURL(url('/'));
  }

  const PAGES = () => [
    ['/', 'Dashboard', 'dashboard'], ['/assets', 'Assets', 'assets'], [`/assets/${calibrated}`, 'Asset CAL-01', 'asset'],
    [`/assets/${calibrated}/checks/new`, 'Record a check of CAL-01', 'check-new'], ['/queue', 'Queue', 'queue'], ['/messages', 'Messages', 'messages'], ['/account', 'Account', 'account'],
    ['/labels?q=CAL', 'Labels', 'labels'], ['/logout', 'Sign out', null],
  ] as const;

  for (const width of WIDTHS) {
    it(`signs in by keyboard and shows every page without an accessibility violation at ${width} px`, { timeout: 180_000 }, async () => {
      const { page, problems } = await window(width);
      const login = await page.goto(url('/login'));
      assert.equal(login?.status(), 200);
      assert.deepEqual((await new AxeBuilder({ page }).withTags(WCAG).analyze()).violations.map((v) => v.id), [], 'the sign-in page');
      if (process.env.SCREENSHOTS === '1') await page.screenshot({ path: join(SHOTS, width === 1280 ? 'login.png' : 'login-narrow.png') });
      await signInByKeyboard(page);
      for (const [path, title, shot] of PAGES()) {
        const res = await page.goto(url(path));
        assert.equal(res?.status(), 200, path);
        assert.equal(await page.title(), `${title} — Demo Holdings`);
        assert.equal(await page.locator('h1').count(), 1, `${path} has one h1`);
        const names = await page.locator('nav[aria-label="Main"] a').allTextContents();
        assert.deepEqual(names, ['Dashboard', 'Assets', 'Queue', 'Messages', 'Account', 'Sign out']);
        const violations = (await new AxeBuilder({ page }).withTags(WCAG).analyze()).violations;
        assert.deepEqual(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `${path} at ${width} px`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `${path} does not scroll sideways at ${width} px (${overflow} px)`);
        if (shot && process.env.SCREENSHOTS === '1') {
          await page.screenshot({ path: join(SHOTS, width === 1280 ? `${shot}.png` : `${shot}-narrow.png`), fullPage: width === 1280 });
        }
      }
      // The calendar link: made, shown once, replaced — each a button of a form on /account.
      await page.goto(url('/account'));
      // The first width makes the user's link; the second finds one and replaces it.
      await page.getByRole('button', { name: /^(Make a|Replace) calendar link$/ }).click();
      const link = await page.locator('#feed-link').inputValue();
      assert.match(link, /^https:\/\/localhost:\d+\/calendar\/[0-9a-f]{64}\.ics$/);
      await checkPage(page, '/account (a new calendar link)', 'Account', width);
      if (width === 1280 && process.env.SCREENSHOTS === '1') await page.screenshot({ path: join(SHOTS, 'account-calendar.png'), fullPage: true });
      await page.getByRole('button', { name: 'Replace calendar link' }).click();
      assert.notEqual(await page.locator('#feed-link').inputValue(), link);
      const calendar = await page.context().request.get(link);
      assert.equal(calendar.status(), 404, 'the replaced link is gone');
      // Signing out by keyboard: the page's one button.
      await page.goto(url('/logout'));
      await page.locator('main button').focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(url('/login'));
      // Signed out: the public status page a label opens.
      const token = statusToken(await labelSecret(svc.database, svc.clock), calibrated);
      const status = await page.goto(url(`/s/${token}`));
      assert.equal(status?.status(), 200);
      assert.match(await page.title(), /^Asset CAL-01 — /);
      await checkPage(page, '/s/…', null, width);
      if (process.env.SCREENSHOTS === '1') await page.screenshot({ path: join(SHOTS, width === 1280 ? 'status.png' : 'status-narrow.png') });
      assert.deepEqual(problems, [], 'no script error and nothing blocked');
      await page.context().close();
    });
  }

  /** One h1, no axe-core violation, no sideways scrolling; the title when given. */
  async function checkPage(page: Page, what: string, title: string | null, width: number): Promise<void> {
    if (title) assert.equal(await page.title(), `${title} — Demo Holdings`);
    assert.equal(await page.locator('h1').count(), 1, `${what} has one h1`);
    const violations = (await new AxeBuilder({ page }).withTags(WCAG).analyze()).violations;
    assert.deepEqual(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `${what} at ${width} px`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${what} does not scroll sideways at ${width} px (${overflow} px)`);
  }

  it('the guide\'s screenshots are in docs/screenshots/ (npm run screenshots makes them)', () => {
    for (const name of ['login', 'login-narrow', 'dashboard', 'dashboard-narrow', 'assets', 'asset', 'asset-narrow', 'messages']) {
      assert.ok(existsSync(join(SHOTS, `${name}.png`)), `docs/screenshots/${name}.png`);
    }
  });
});
