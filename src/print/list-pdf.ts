// A printable list as a PDF (A4, portrait): the company's name and logo, the list's
// title, the filter it was asked with and the day it was printed, then one line per
// row under the column headings (repeated on every page), and "Page N of M" at the
// foot of each page.
//
// The document is written as the rows arrive — a page goes to the output as soon as
// the next one begins (pdfkit without `bufferPages`) — so memory holds one page, one
// batch of rows and, until the end, a small reference to each page written (the
// page tree lists them), under 1 KiB a page. The total for "of M" is not known
// until the last row: each page's foot draws it from one small form (a PDF XObject)
// shared by every page, whose content, the number, is written after the last page.
// A row is one line: a cell too wide for its column is cut and ends with "…", so
// every row has the same height and no cell can push the others out of line.
// Rows are drawn with the PDF's own text operators, one content chunk a row, in a
// standard font whose widths pdfkit gives: pdfkit's `text()` lays out, measures and
// kerns every call, which drew a 10,000-row list in about 4 s instead of 1.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { winAnsi, winAnsiLiteral } from './win-ansi.ts';

export interface ListColumn<R> {
  readonly heading: string;
  /** Its share of the page's width (the shares of a list's columns are weighed against their sum). */
  readonly width: number;
  cell(row: R): string | null;
}

export interface ListHeading {
  /** What the list is, e.g. "Assets". */
  readonly title: string;
  readonly companyName: string;
  /** A PNG or JPEG (as a company keeps it); null for none. */
  readonly logo: Buffer | null;
  /** The filter as the caller wrote it; empty for none. */
  readonly filter: string;
  /** The day the list was made (YYYY-MM-DD, in the company's time zone). */
  readonly today: string;
}

const MARGIN = 36;
const FONT = 'Helvetica';
const BOLD = 'Helvetica-Bold';
const SIZE = 8;
const ROW = 13;
const FOOT = 24;
const PAD = 4;
/** Baseline below a line's top, as pdfkit places Helvetica text at SIZE. */
const BASELINE = SIZE * 0.718;

type Doc = PDFKit.PDFDocument;

/**
 * Widths of text in one font and size, summed from each character's width (read
 * once from pdfkit) instead of measured whole: measuring every cell was most of the
 * time a long list took. The sum leaves out kerning, which in the standard fonts
 * only narrows text, so text that fits by it fits as drawn.
 */
class Widths {
  private readonly known = new Map<string, number>();
  constructor(private readonly doc: Doc) {}

  of(text: string): number {
    let sum = 0;
    for (const c of text) {
      let w = this.known.get(c);
      if (w === undefined) this.known.set(c, (w = this.doc.widthOfString(c)));
      sum += w;
    }
    return sum;
  }

  /** `text` cut to `width` points, ending with "…" when cut. */
  fitted(text: string, width: number): string {
    if (this.of(text) <= width) return text;
    const room = width - this.of('…');
    let used = 0;
    let end = 0;
    for (const c of text) {
      used += this.of(c);
      if (used > room) break;
      end += c.length;
    }
    return `${text.slice(0, end).trimEnd()}…`;
  }
}

/** `text` cut to `width` points in the document's current font, ending with "…" when cut (headings: measured whole). */
function fitted(doc: Doc, text: string, width: number): string {
  return doc.widthOfString(text) <= width ? text : new Widths(doc).fitted(text, width);
}

class ListWriter<R> {
  private page = 0;
  private y = 0;
  private readonly xs: number[] = [];
  private readonly widths: number[] = [];
  private readonly bottom: number;
  /** The shared form that shows the number of pages (see above). */
  private readonly total: PDFKit.PDFKitReference;
  /** The rows' font (Helvetica in Windows-1252), as each page and the form name it: /LF. */
  private readonly font: PDFKit.PDFKitReference;
  /** Widths in the rows' font. */
  private readonly widthsOf: Widths;

  constructor(private readonly doc: Doc, private readonly heading: ListHeading, private readonly columns: readonly ListColumn<R>[]) {
    const inner = doc.page.width - 2 * MARGIN;
    const sum = columns.reduce((s, c) => s + c.width, 0);
    let x = MARGIN;
    for (const c of columns) {
      const w = (inner * c.width) / sum;
      this.xs.push(x);
      this.widths.push(w - PAD);
      x += w;
    }
    this.bottom = doc.page.height - MARGIN - FOOT;
    doc.font(FONT).fontSize(SIZE);
    this.widthsOf = new Widths(doc);
    this.font = doc.ref({ Type: 'Font', Subtype: 'Type1', BaseFont: FONT, Encoding: 'WinAnsiEncoding' });
    this.font.end('');
    this.total = doc.ref({ Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 200, SIZE * 2], Resources: { Font: { LF: this.font } } });
    this.startPage();
  }

  private headings(): void {
    this.doc.font(BOLD).fontSize(SIZE);
    this.columns.forEach((c, i) => {
      if (c.heading !== '') this.doc.text(fitted(this.doc, c.heading, this.widths[i]!), this.xs[i], this.y, { lineBreak: false });
    });
    this.y += ROW;
  }

  /**
   * One row as text operators. pdfkit's page space runs top-down (its CTM flips the
   * page), so each cell's text matrix flips back, its origin on the row's baseline.
   */
  private row(cells: readonly string[]): void {
    let ops = `BT /LF ${SIZE} Tf`;
    const y = (this.y + BASELINE).toFixed(2);
    cells.forEach((text, i) => {
      if (text !== '') ops += ` 1 0 0 -1 ${this.xs[i]!.toFixed(2)} ${y} Tm ${winAnsiLiteral(this.widthsOf.fitted(text, this.widths[i]!))} Tj`;
    });
    this.doc.addContent(`${ops} ET`);
    this.y += ROW;
  }

  private startPage(): void {
    const { doc, heading } = this;
    if (this.page > 0) {
      const done = doc.page.dictionary;
      doc.addPage();
      // The page before is written out now; pdfkit keeps its dictionary until the end (the page tree
      // names it), and with it the page's content and resources: only its number is needed again.
      const data = done.data as Record<string, unknown>;
      for (const key of Object.keys(data)) delete data[key];
    }
    this.page += 1;
    this.y = MARGIN;
    const width = doc.page.width - 2 * MARGIN;
    if (this.page === 1) {
      let textX = MARGIN;
      if (heading.logo) {
        try {
          doc.image(heading.logo, MARGIN, MARGIN, { fit: [120, 48] });
          textX += 132;
        } catch {
          // A logo the image reader cannot decode is left out; the list is still printed.
        }
      }
      doc.font(BOLD).fontSize(16);
      doc.text(fitted(doc, winAnsi(heading.companyName), width - (textX - MARGIN)), textX, MARGIN, { lineBreak: false });
      doc.font(FONT).fontSize(12).text(heading.title, textX, MARGIN + 22, { lineBreak: false });
      this.y = MARGIN + 58;
      doc.font(FONT).fontSize(SIZE + 1);
      doc.text(fitted(doc, winAnsi(`Filter: ${heading.filter === '' ? '(none)' : heading.filter}`), width), MARGIN, this.y, { lineBreak: false });
      doc.text(`Date: ${heading.today}`, MARGIN, this.y + ROW, { lineBreak: false });
      this.y += 2 * ROW + 6;
    } else {
      doc.font(BOLD).fontSize(SIZE + 1).text(fitted(doc, winAnsi(`${heading.companyName} — ${heading.title}`), width), MARGIN, this.y, { lineBreak: false });
      this.y += ROW + 4;
    }
    this.headings();
    (doc.page.fonts as Record<string, PDFKit.PDFKitReference>).LF = this.font;
    doc.moveTo(MARGIN, this.y - 3).lineTo(MARGIN + width, this.y - 3).lineWidth(0.5).stroke();
    this.foot();
  }

  /** "Page N of " as text, then the shared form with the total. */
  private foot(): void {
    const { doc } = this;
    const label = `Page ${this.page} of `;
    doc.font(FONT).fontSize(SIZE);
    const x = MARGIN + (doc.page.width - 2 * MARGIN - doc.widthOfString(`${label}999`)) / 2;
    const y = doc.page.height - MARGIN - SIZE;
    doc.text(label, x, y, { lineBreak: false });
    (doc.page.xobjects as Record<string, PDFKit.PDFKitReference>).Tot = this.total;
    // pdfkit draws top-down (its CTM flips the page); the form draws bottom-up, so it is flipped back at the baseline.
    doc.addContent(`q 1 0 0 -1 ${(x + doc.widthOfString(label)).toFixed(2)} ${(y + BASELINE).toFixed(2)} cm /Tot Do Q`);
  }

  rows(rows: readonly R[]): void {
    for (const row of rows) {
      if (this.y + ROW > this.bottom) this.startPage();
      this.row(this.columns.map((c) => winAnsi(c.cell(row) ?? '')));
    }
  }

  /** Writes the total into the shared form; the document may end after this. */
  finish(): void {
    this.total.end(`BT /LF ${SIZE} Tf 0 0 Td (${this.page}) Tj ET`);
  }
}

/**
 * Resolves once what the document wrote has reached `out` and `out` can take more,
 * or `out` has closed (a client gone away). The document hands its bytes on in a
 * later turn of the event loop (nextTick), which a loop of awaits on rows read
 * without I/O (SQLite's) never reaches: without this turn every page stayed in the
 * document's buffer until the end.
 */
async function drained(out: Writable): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (!out.writableNeedDrain || out.destroyed) return;
  const gone = new AbortController();
  await Promise.race([once(out, 'drain', { signal: gone.signal }), once(out, 'close', { signal: gone.signal })]).catch(() => undefined);
  gone.abort();
}

/**
 * Writes the list as a PDF to `out` (which it ends), taking `rows` a batch at a time
 * and waiting for `out` to drain between batches. Stops early, without error, if
 * `out` is destroyed meanwhile; a failure reading the rows destroys `out` with it.
 */
export async function writeListPdf<R>(out: Writable, heading: ListHeading, columns: readonly ListColumn<R>[],
  rows: AsyncIterable<readonly R[]> | Iterable<readonly R[]>): Promise<void> {
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, bufferPages: false,
    info: { Title: winAnsi(`${heading.companyName}: ${heading.title}, ${heading.today}`), Producer: 'asset-tracker' } });
  const ended = once(doc, 'end');
  doc.pipe(out);
  try {
    const writer = new ListWriter(doc, heading, columns);
    for await (const batch of rows) {
      writer.rows(batch);
      await drained(out);
      if (out.destroyed) {
        doc.unpipe(out);
        return;
      }
    }
    writer.finish();
    doc.end();
    await ended;
  } catch (e) {
    doc.unpipe(out);
    out.destroy(e instanceof Error ? e : new Error(String(e)));
    throw e;
  }
}
