// The API reference page served at /docs: a headless Chromium with the network cut off
// renders it from that one answer, listing every operation of the OpenAPI document,
// and the page asks for nothing else — no script, style, font or image from anywhere.
// docs/api-reference.html (npm run docs) is the page the service serves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM, chromiumMissing } from '../support/chromium.ts';
import { type Service, startService } from '../support/harness.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERBS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

const missing = chromiumMissing('The API reference page is not rendered');

interface Operation { readonly id: string; readonly verb: string; readonly path: string; readonly summary: string }

function operationsOf(doc: { paths: Record<string, Record<string, { operationId: string; summary: string }>> }): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item)
    .filter(([verb]) => VERBS.includes(verb))
    .map(([verb, op]) => ({ id: op.operationId, verb, path, summary: op.summary })));
}

describe('the API reference page', { skip: missing }, () => {
  let svc: Service;
  let browser: Browser;
  let served: { status: number; headers: Record<string, unknown>; text: string };
  let operations: Operation[];
  before(async () => {
    svc = await startService('sqlite');
    const anonymous = svc.client(null);
    const page = await anonymous.get('/docs');
    served = { status: page.status, headers: page.headers, text: page.text };
    operations = operationsOf((await anonymous.get('/openapi.json')).body as Parameters<typeof operationsOf>[0]);
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  it('is served at /docs without a certificate, as one HTML answer', () => {
    assert.equal(served.status, 200);
    assert.equal(served.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(served.text, /^<!DOCTYPE html>/);
    assert.doesNotMatch(served.text, /<script[^>]*\bsrc=|<link\b/i, 'nothing is loaded by reference');
    assert.ok(operations.length > 50, `the document has its operations (${operations.length})`);
  });

  it('docs/api-reference.html is the page served (npm run docs writes it)', () => {
    assert.ok(readFileSync(join(ROOT, 'docs/api-reference.html'), 'utf8') === served.text, 'docs/api-reference.html is behind: npm run docs');
  });

  it('renders every operation with the network cut off, and asks for nothing beyond the page', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, serviceWorkers: 'block' });
    const page = await context.newPage();
    const url = `https://127.0.0.1:${svc.port}/docs`;
    const requested: string[] = [];
    const refused: string[] = [];
    const problems: string[] = [];
    await context.route('**/*', (route) => {
      const asked = route.request().url();
      requested.push(asked);
      return asked === url ? route.continue() : route.abort('internetdisconnected');
    });
    context.on('weberror', (e) => problems.push(`page error: ${e.error().message}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('requestfailed', (r) => refused.push(r.url()));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => console.error(`blocked ${e.blockedURI} (${e.violatedDirective})`));
    });

    await page.goto(url, { waitUntil: 'load' });
    await page.waitForSelector('[id^="operation/"]', { timeout: 60_000 });
    // Redoc renders the sections in one pass; give a late fetch (a logo, a font) a moment to show.
    await page.waitForTimeout(500);

    assert.equal(await page.locator('h1').first().textContent(), 'Asset Tracking Service (3.0)');
    const text = await page.locator('body').innerText();
    assert.ok(text.length > 20_000, `the page shows the reference (${text.length} characters)`);
    const sections = new Set(await page.locator('[id^="operation/"]').evaluateAll((els) => els.map((e) => e.id)));
    const menu = await page.locator('[role="menuitem"]').allInnerTexts();
    const unlisted = operations.filter((op) => !sections.has(`operation/${op.id}`)).map((op) => op.id);
    assert.deepEqual(unlisted, [], 'every operation has its section');
    const inMenu = operations.filter((op) => menu.some((item) => item.includes(op.summary)));
    assert.equal(inMenu.length, operations.length, 'every operation is in the menu');
    const shown = await page.locator('[id="operation/listAssets"]').innerText();
    assert.match(shown, /\/3\.0\/assets\/\{filters\}|\/3\.0\/assets/);

    assert.deepEqual(requested, [url], 'the page itself is the only request');
    assert.deepEqual(refused, []);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
