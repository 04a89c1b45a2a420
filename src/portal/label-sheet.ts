// Asset labels as a PDF: A4 sheets of 3 × 8 labels of 70 × 37 mm (the common
// 24-up label sheet), each with the asset's number, description and next check,
// and a QR code of the asset's public status link drawn as vector squares, so it
// prints sharp at any size.
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import type { Readable } from 'node:stream';

export interface Label {
  readonly assetNo: string;
  readonly description: string;
  readonly nextCheck: string | null;
  readonly url: string;
}

const MM = 72 / 25.4;
export const COLUMNS = 3;
export const ROWS = 8;
export const LABEL_WIDTH = 70 * MM;
export const LABEL_HEIGHT = 37 * MM;
/** The sheet's top edge: A4 is 297 mm high, 8 labels 296 mm. */
const TOP = 0.5 * MM;
const PAD = 3 * MM;
const QR_SIZE = LABEL_HEIGHT - 2 * PAD;

/** The dark squares of the QR code, one rectangle per run of dark modules in a row. */
function drawQr(doc: PDFKit.PDFDocument, text: string, x: number, y: number, size: number): void {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  // Four modules of quiet zone on every side, as the standard asks.
  const unit = size / (modules.size + 8);
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (!modules.get(row, col)) continue;
      let end = col;
      while (end + 1 < modules.size && modules.get(row, end + 1)) end++;
      doc.rect(x + (col + 4) * unit, y + (row + 4) * unit, (end - col + 1) * unit, unit);
      col = end;
    }
  }
  doc.fillColor('black').fill();
}

function drawLabel(doc: PDFKit.PDFDocument, label: Label, x: number, y: number): void {
  drawQr(doc, label.url, x + PAD, y + PAD, QR_SIZE);
  const textX = x + PAD + QR_SIZE + 2 * MM;
  const width = LABEL_WIDTH - (textX - x) - PAD;
  doc.font('Helvetica-Bold').fontSize(11).text(label.assetNo, textX, y + PAD + 2, { width, height: 14, lineBreak: false, ellipsis: true });
  doc.font('Helvetica').fontSize(8).text(label.description, textX, y + PAD + 17, { width, height: 38, ellipsis: true });
  doc.font('Helvetica').fontSize(8).text(`Next check: ${label.nextCheck ?? '—'}`, textX, y + LABEL_HEIGHT - PAD - 10,
    { width, height: 10, lineBreak: false, ellipsis: true });
}

/** The labels' PDF, a page per 24; the stream ends when the document does. */
export function labelSheets(labels: readonly Label[], title: string): Readable {
  const doc = new PDFDocument({ size: 'A4', margin: 0, autoFirstPage: false, info: { Title: title, Creator: 'asset-tracker' } });
  const perPage = COLUMNS * ROWS;
  labels.forEach((label, i) => {
    if (i % perPage === 0) doc.addPage();
    const cell = i % perPage;
    drawLabel(doc, label, (cell % COLUMNS) * LABEL_WIDTH, TOP + Math.floor(cell / COLUMNS) * LABEL_HEIGHT);
  });
  if (labels.length === 0) doc.addPage();
  doc.end();
  return doc;
}
