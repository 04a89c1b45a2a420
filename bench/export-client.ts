// The CSV export client (pinned by measure.ts): one mTLS GET with `Accept: text/csv`,
// the body read as it arrives and only counted — never held — so that a million
// rows cost this process no memory either. Reads its job as JSON from argv[2];
// prints `MEASURING` just before the request and `RESULT <json>` at the end.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { announceMeasuring, oneRequestResult, printResult } from './result.ts';

export interface ExportJob {
  readonly origin: string;
  readonly path: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The header row the export must start with (without its CRLF). */
  readonly header: string;
  /** Data rows the export must have. */
  readonly rows: number;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;

/**
 * Counts RFC 4180 records over the bytes as they come: a comma or line break
 * inside a quoted cell ends nothing (an escaped `""` toggles twice). Works on
 * bytes, not text: no UTF-8 sequence contains these three ASCII bytes.
 */
class CsvRecords {
  /** Complete records, the header included. */
  records = 0;
  header = '';
  /** The first data row (from 1) whose cell count differs from the header's. */
  firstRagged: number | null = null;
  private quoted = false;
  private cells = 1;
  private columns = 0;
  /** Bytes of the record not yet ended (a truncated body leaves some). */
  private open = 0;
  private readonly head: Buffer[] = [];

  feed(chunk: Buffer): void {
    if (this.records === 0) this.head.push(chunk);
    // Locals in the loop: it runs once per byte of the export.
    let { quoted, cells } = this;
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === QUOTE) quoted = !quoted;
      else if (quoted) continue;
      else if (b === COMMA) cells++;
      else if (b === LF) {
        this.endRecord(cells, this.open + i + 1 - start);
        cells = 1;
        start = i + 1;
        this.open = 0;
      }
    }
    this.open += chunk.length - start;
    this.quoted = quoted;
    this.cells = cells;
  }

  /** Whether the body ended on a record's end (not inside one, nor inside quotes). */
  get complete(): boolean { return this.open === 0 && !this.quoted; }

  /** A record ended: `cells` cells, `length` bytes with its line break. */
  private endRecord(cells: number, length: number): void {
    if (this.records === 0) {
      this.columns = cells;
      this.header = Buffer.concat(this.head).subarray(0, length).toString().replace(/\r?\n$/, '');
      this.head.length = 0;
    } else if (cells !== this.columns) {
      this.firstRagged ??= this.records;
    }
    this.records++;
  }
}

interface Answer {
  readonly status: number; readonly contentType: string; readonly bytes: number; readonly ended: boolean;
  /** The start of a body other than 200's (an error document), or the request's error. */
  readonly error: string | null;
}

function fetchCsv(job: ExportJob, csv: CsvRecords): Promise<Answer> {
  const url = new URL(job.origin);
  return new Promise((resolve) => {
    const req = https.request({
      host: url.hostname, port: url.port, path: job.path, servername: 'localhost', agent: false, headers: { accept: 'text/csv' },
      cert: readFileSync(job.certFile), key: readFileSync(job.keyFile), rejectUnauthorized: false, minVersion: 'TLSv1.2',
    }, (res) => {
      let bytes = 0;
      let refused = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (res.statusCode === 200) csv.feed(chunk);
        else if (refused.length < 300) refused += chunk.toString().slice(0, 300);
      });
      // 'close' also comes when the server drops the connection midway; `complete` tells the two apart.
      res.on('close', () => resolve({
        status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), bytes, ended: res.complete, error: refused === '' ? null : refused,
      }));
    });
    req.on('error', (e) => resolve({ status: 0, contentType: '', bytes: 0, ended: false, error: e.message }));
    req.end();
  });
}

/** Why the answer is not the expected export, or null. */
function problemOf(job: ExportJob, a: Answer, csv: CsvRecords, rows: number): string | null {
  if (!a.contentType.startsWith('text/csv')) return `content-type ${a.contentType}`;
  if (!a.ended) return `the body stopped after ${a.bytes} bytes`;
  if (!csv.complete) return 'the body ends inside a record';
  if (csv.header !== job.header) return `header row ${csv.header}`;
  if (csv.firstRagged !== null) return `data row ${csv.firstRagged} has not the header's number of cells`;
  if (rows !== job.rows) return `${rows} data rows, not ${job.rows}`;
  return null;
}

async function main(job: ExportJob): Promise<void> {
  const csv = new CsvRecords();
  announceMeasuring();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const a = await fetchCsv(job, csv);
  const ms = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  const rows = Math.max(0, csv.records - 1);
  const problem = a.status === 200 ? problemOf(job, a, csv, rows) : null;
  printResult(oneRequestResult({ ms, used, status: a.status, bytes: a.bytes, problem, error: a.error, records: rows }));
}

await main(JSON.parse(process.argv[2]!) as ExportJob);
