// The pieces of the printed lists that need no service: choosing a list's format from
// Accept, the text the standard PDF fonts can draw, and the assets due list written
// to any stream (the same document a weekly report attaches), read back with pdf.js.
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/errors.ts';
import { listFormat } from '../../src/engine/negotiate.ts';
import { JsonObject, parseJson } from '../../src/model/json.ts';
import { winAnsi } from '../../src/print/win-ansi.ts';
import { writeAssetDueListPdf } from '../../src/resources/printed-lists.ts';
import { pdfLines } from '../support/pdf-text.ts';

const ALL = ['json', 'csv', 'pdf'] as const;

async function collect(write: (out: PassThrough) => Promise<void>): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await write(out);
  return Buffer.concat(chunks);
}

const asset = (asset_no: string, next_check: string | null, more: object = {}) =>
  parseJson(JSON.stringify({ asset_no, description: `about ${asset_no}`, next_check, last_result: null, ...more })) as JsonObject;

describe('a list\'s format from Accept', () => {
  it('the highest q wins; CSV and PDF only when named; ties go to the named type, then a file over JSON, then the first named', () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'json'], ['', 'json'], ['*/*', 'json'], ['application/*', 'json'], ['text/*', 'json'], ['text/html', 'json'],
      ['application/pdf', 'pdf'], ['APPLICATION/PDF; charset=x', 'pdf'], ['text/csv', 'csv'],
      ['application/json;q=0.9, application/pdf;q=0.5', 'json'], ['application/json;q=0.5, application/pdf', 'pdf'],
      ['application/json, application/pdf', 'pdf'], ['application/pdf, text/csv', 'pdf'], ['text/csv, application/pdf', 'csv'],
      ['*/*;q=1, application/pdf;q=0.9', 'json'], ['application/pdf;q=0.9, */*;q=0.8', 'pdf'],
      ['application/pdf;q=1.5, application/json;q=0.1', 'json'], ['application/pdf;q=0.123', 'pdf'],
      ['text/html, text/csv;q=0.5', 'csv'], ['text/csv;q=0, application/json', 'json'],
    ];
    for (const [accept, format] of cases) assert.equal(listFormat(accept, ALL), format, String(accept));
  });

  it('406 when only formats of ours the list does not make are asked for, or JSON is refused with nothing else acceptable', () => {
    const refused = (accept: string, offered: readonly ('json' | 'csv' | 'pdf')[]) => assert.throws(() => listFormat(accept, offered),
      (e: unknown) => e instanceof ApiError && e.status === 406 && e.code === 'not_acceptable'
        && e.message === `No format in Accept: ${accept} can be answered; this list answers ${offered.map((f) => ({ json: 'application/json', csv: 'text/csv', pdf: 'application/pdf' })[f]).join(', ')}`);
    refused('application/pdf', ['json', 'csv']);
    refused('application/json;q=0', ALL);
    refused('*/*;q=0', ALL);
    refused('text/csv;q=0, application/pdf', ['json', 'csv']);
    assert.equal(listFormat('application/pdf, */*;q=0.1', ['json', 'csv']), 'json');
    assert.equal(listFormat('image/png', ['json', 'csv']), 'json');
  });
});

describe('text for the standard PDF fonts', () => {
  it('keeps Windows-1252, drops accents it lacks, replaces the rest with ? and control characters with spaces', () => {
    assert.equal(winAnsi('plain ASCII ~'), 'plain ASCII ~');
    assert.equal(winAnsi('Ünïcødé €5 “quoted” – Œuvre'), 'Ünïcødé €5 “quoted” – Œuvre');
    assert.equal(winAnsi('Łódź Kraków Őrség Ærø ı'), 'Lódz Kraków Orség Ærø i');
    assert.equal(winAnsi('日本 ✓ 😀 Ж'), '?? ? ? ?');
    assert.equal(winAnsi('two\nlines\ttab\u2028'), 'two lines tab ');
    assert.equal(winAnsi('e\u0301'), 'é');
  });
});

describe('the assets due list written to any stream', () => {
  const heading = { companyName: 'Acme GmbH', logo: null, filter: 'next_check<2026-08-01', today: '2026-07-01' };

  it('the heading, one line per asset in the order given, Overdue before today, Page N of M', async () => {
    const rows = [[asset('A-1', '2026-06-30'), asset('A-2', '2026-07-01')], [asset('A-3', null, { location: { description: 'Hall' } })]];
    const pages = await pdfLines(await collect((out) => writeAssetDueListPdf(out, { ...heading, companyName: 'Acme Łódź 日本' }, rows)));
    assert.deepEqual(pages, [['Acme Lódz ??', 'Assets', 'Filter: next_check<2026-08-01', 'Date: 2026-07-01',
      'Asset no | Description | Location | Department | Next check | Last result',
      'A-1 | about A-1 | 2026-06-30 | Overdue', 'A-2 | about A-2 | 2026-07-01', 'A-3 | about A-3 | Hall', 'Page 1 of | 1']]);
  });

  it('streams: the pages reach the reader as the rows come, and a slow reader holds the writer back', async () => {
    let waiting = 0;
    let pages = 0;
    let received = 0;
    const reader = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _enc, done) {
        received += chunk.length;
        pages += (chunk.toString('latin1').match(/\/Type \/Page\b/g) ?? []).length;
        setImmediate(done);
      },
    });
    // Rows that need no I/O to read (as SQLite's): the writer must still let its pages out between batches.
    const seen: number[] = [];
    async function* rows() {
      for (let b = 0; b < 100; b++) {
        waiting = Math.max(waiting, reader.writableLength);
        seen.push(received);
        yield Array.from({ length: 200 }, (_, i) => asset(`M-${b}-${i}`, '2027-01-01'));
      }
    }
    await writeAssetDueListPdf(reader, heading, rows());
    assert.ok(pages > 300, `${pages} pages`);
    assert.ok(waiting < 256 * 1024, `at most ${waiting} bytes waited to be read`);
    // Half-way through the rows, about half the document has been read (each batch's pages but the last, still open).
    assert.ok(seen[50]! > received * 0.4, `${seen[50]} of ${received} bytes read half-way`);
  });

  it('a reader that goes away stops the writing without an error', async () => {
    const out = new PassThrough();
    let made = 0;
    async function* rows() {
      for (;;) {
        made += 1;
        if (made === 3) out.destroy();
        yield Array.from({ length: 200 }, (_, i) => asset(`M-${i}`, null));
      }
    }
    await writeAssetDueListPdf(out, heading, rows());
    assert.equal(made, 3);
  });
});
