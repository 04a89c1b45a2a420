// QR labels and the public status page they open: the PDF has one label per chosen
// asset on A4 sheets of 3 × 8, and each label's QR code (rendered by pdftoppm and
// read by jsQR) is the asset's status link; the status page shows only the public
// fields, to anyone; a changed link, an id of another company and every link made
// before the secret was replaced are missing pages. Readonly users print no labels.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import jsqr from 'jsqr';
import { PNG } from 'pngjs';
import { rotateLabelSecret } from '../../src/admin/labels.ts';
import { addDays, formatDate } from '../../src/model/dates.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';
import { create } from '../http/resources-support.ts';

const hasPdftoppm = (() => {
  try {
    execFileSync('pdftoppm', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasPdftoppm && process.env.REQUIRE_PDFTOPPM) throw new Error('pdftoppm (poppler-utils) is required and missing');

// jsqr is CommonJS whose types declare an ES default export; its module object carries it as `default`.
const jsQR = jsqr.default;
const DPI = 150;
const px = (mm: number) => (mm / 25.4) * DPI;

/** The QR codes of a PDF's pages, label by label (row by row), as text; null for an empty label. */
function qrCodes(pdf: Buffer): (string | null)[][] {
  const dir = mkdtempSync(join(tmpdir(), 'labels-'));
  try {
    writeFileSync(join(dir, 'labels.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', String(DPI), '-png', join(dir, 'labels.pdf'), join(dir, 'page')]);
    const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [join(dir, 'labels.pdf')]).toString())![1]);
    const out: (string | null)[][] = [];
    for (let p = 1; p <= pages; p++) {
      const name = pages >= 10 ? String(p).padStart(2, '0') : String(p);
      const png = PNG.sync.read(readFileSync(join(dir, `page-${name}.png`)));
      assert.ok(Math.abs(png.width - px(210)) < 2 && Math.abs(png.height - px(297)) < 2, `A4: ${png.width} × ${png.height}`);
      const codes: (string | null)[] = [];
      for (let cell = 0; cell < 24; cell++) {
        const x0 = Math.round(px((cell % 3) * 70));
        const y0 = Math.round(px(0.5 + Math.floor(cell / 3) * 37));
        const w = Math.round(px(70));
        const h = Math.round(px(37));
        const crop = new Uint8ClampedArray(w * h * 4);
        for (let y = 0; y < h; y++) {
          const from = ((y0 + y) * png.width + x0) * 4;
          crop.set(png.data.subarray(from, from + w * 4), y * w * 4);
        }
        codes.push(jsQR(crop, w, h)?.data ?? null);
      }
      out.push(codes);
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const pdfText = (pdf: Buffer) => {
  const dir = mkdtempSync(join(tmpdir(), 'labels-'));
  try {
    writeFileSync(join(dir, 'l.pdf'), pdf);
    return execFileSync('pdftotext', ['-layout', join(dir, 'l.pdf'), '-']).toString();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

for (const kind of DB_KINDS) {
  describe(`portal labels and status page (${kind})`, { skip: hasPdftoppm ? false : 'pdftoppm (poppler-utils) is not installed' }, () => {
    let svc: PortalService;
    let today: string;
    let browser: Browser;
    let reader: Browser;
    const ids: number[] = [];
    let theirs: number;
    before(async () => {
      svc = await startPortal(kind);
      today = formatDate(svc.clock.now());
      const acme = await svc.company('Acme Instruments');
      const other = await svc.company('Other');
      const api = (await svc.certificate(acme)).client;
      for (let i = 1; i <= 26; i++) {
        ids.push(await create(api, 'assets', { asset_no: `LBL-${String(i).padStart(2, '0')}`, serial_no: `SECRET-SN-${i}`, description: `Gauge ${i}`,
          status: 'Active', next_check: addDays(today, i === 1 ? -5 : i * 10), data: { costcode: 'CC-PRIVATE' } }));
      }
      theirs = await create((await svc.certificate(other)).client, 'assets', { asset_no: 'THEIRS-1', description: 'Other', next_check: today });
      const user = await portalUser(svc, acme);
      browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      const ro = await portalUser(svc, acme, 'readonly');
      reader = new Browser(svc.portalPort);
      await reader.signIn(ro.username, ro.password);
    });
    after(() => svc.close());

    const pdfOf = (chosen: readonly number[]) => browser.get(`/labels.pdf?${chosen.map((id) => `id=${id}`).join('&')}`);

    it('the asset list links to the labels of its selection; /labels ticks each asset of it', async () => {
      const list = await browser.get('/assets?q=LBL-0');
      const link = /href="(\/labels\?[^"]+)">Print labels for these assets/.exec(list.text)?.[1]?.replaceAll('&amp;', '&');
      assert.equal(link, '/labels?q=LBL-0&sort=asset_no&dir=asc');
      const page = await browser.get(link);
      assert.equal(page.status, 200);
      assert.match(page.text, /<form method="get" action="\/labels\.pdf">/);
      assert.equal((page.text.match(/<input type="checkbox" name="id" value="\d+" id="label-\d+" checked>/g) ?? []).length, 9);
    });

    it('one label per chosen asset, 24 a sheet, each QR code the asset\'s status link, which shows the public fields', async () => {
      const chosen = ids.slice(0, 25);
      const pdf = await pdfOf(chosen);
      assert.equal(pdf.status, 200, pdf.text.slice(0, 300));
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      assert.equal(pdf.bytes.subarray(0, 5).toString(), '%PDF-');
      const pages = qrCodes(pdf.bytes);
      assert.equal(pages.length, 2);
      const codes = pages.flat();
      assert.equal(codes.filter((c) => c !== null).length, 25);
      assert.ok(codes.slice(25).every((c) => c === null), 'the rest of the second sheet is empty');
      const origin = `https://localhost:${svc.portalPort}/s/`;
      codes.slice(0, 25).forEach((c, i) => assert.ok(c!.startsWith(`${origin}${chosen[i]}-`), `label ${i}: ${c}`));
      const text = pdfText(pdf.bytes);
      for (const n of ['LBL-01', 'LBL-24', 'LBL-25', 'Gauge 7', `Next check: ${addDays(today, 20)}`]) assert.ok(text.includes(n), n);
      assert.ok(!text.includes('SECRET-SN'));

      const anyone = new Browser(svc.portalPort);
      const first = await anyone.get(codes[0]!.slice(`https://localhost:${svc.portalPort}`.length));
      assert.equal(first.status, 200);
      assert.match(first.text, /<title>Asset LBL-01 — Acme Instruments<\/title>/);
      for (const shown of ['LBL-01', 'Gauge 1', 'Acme Instruments', 'Active', addDays(today, -5), 'Overdue', 'not in date']) {
        assert.ok(first.text.includes(shown), shown);
      }
      assert.ok(!first.text.includes('SECRET-SN') && !first.text.includes('CC-PRIVATE') && !first.text.includes('<nav'));
      const second = await anyone.get(codes[1]!.slice(`https://localhost:${svc.portalPort}`.length));
      assert.match(second.text, /Due soon<\/span>:\s*this asset is in date\./);
    });

    it('a changed or made-up link, and another company\'s id in the labels, are missing pages', async () => {
      const [code] = qrCodes((await pdfOf([ids[2]!])).bytes)[0]!;
      const path = new URL(code!).pathname;
      assert.equal((await reader.get(path)).status, 200);
      const sig = path.slice(path.indexOf('-') + 1);
      const flipped = `${path.slice(0, -1)}${path.endsWith('A') ? 'B' : 'A'}`;
      for (const bad of [flipped, `/s/${ids[3]}-${sig}`, `/s/${theirs}-${sig}`, `/s/${ids[2]}`, '/s/x', `/s/${ids[2]}-${sig}x`]) {
        const r = await reader.get(bad);
        assert.equal(r.status, 404, bad);
        assert.match(r.text, /There is no such page or record/);
      }
      const foreign = await pdfOf([ids[0]!, theirs]);
      assert.equal(foreign.status, 404);
      assert.match(foreign.text, new RegExp(`Asset ${theirs} does not exist`));
      assert.equal((await pdfOf([987654321])).status, 404);
      assert.equal((await browser.get('/labels.pdf')).status, 400);
      assert.equal((await browser.get('/labels.pdf?id=abc')).status, 400);
    });

    it('a readonly user gets no labels: no link, 403 with the API\'s kind of message', async () => {
      const list = await reader.get('/assets');
      assert.ok(!list.text.includes('Print labels'));
      for (const path of ['/labels', `/labels.pdf?id=${ids[0]}`]) {
        const r = await reader.get(path);
        assert.equal(r.status, 403, path);
        assert.match(r.text, /Access denied: GET on labels requires user/);
      }
      assert.equal((await new Browser(svc.portalPort).get('/labels')).status, 303, 'signed out: to the sign-in page');
    });

    it('replacing the secret turns every printed link into a missing page; new labels work', async () => {
      const [before] = qrCodes((await pdfOf([ids[4]!])).bytes)[0]!;
      assert.equal((await reader.get(new URL(before!).pathname)).status, 200);
      await rotateLabelSecret(svc.database, svc.clock);
      assert.equal((await reader.get(new URL(before!).pathname)).status, 404);
      const [after] = qrCodes((await pdfOf([ids[4]!])).bytes)[0]!;
      assert.notEqual(after, before);
      assert.equal((await reader.get(new URL(after!).pathname)).status, 200);
    });
  });
}
