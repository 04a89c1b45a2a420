// The text of a PDF as a reader sees it (pdf.js, Mozilla's PDF reader, in its
// build for Node): per page, its lines top to bottom, each line's pieces of text
// left to right joined by " | " — so a printed list's row reads as its cells.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** The metrics of the standard fonts, which pdf.js ships beside its build. */
const FONTS = `${join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts')}/`;

interface Piece { readonly x: number; readonly y: number; readonly text: string }

export async function pdfLines(bytes: Buffer): Promise<string[][]> {
  const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false, standardFontDataUrl: FONTS }).promise;
  const pages: string[][] = [];
  try {
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      const pieces: Piece[] = content.items.flatMap((item) => ('str' in item && item.str.trim() !== ''
        ? [{ x: item.transform[4] as number, y: Math.round(item.transform[5] as number), text: item.str.trim() }] : []));
      const ys = [...new Set(pieces.map((p) => p.y))].sort((a, b) => b - a);
      pages.push(ys.map((y) => pieces.filter((p) => p.y === y).sort((a, b) => a.x - b.x).map((p) => p.text).join(' | ')));
    }
  } finally {
    await doc.destroy();
  }
  return pages;
}
