// The printed list's client (pinned by measure.ts): one mTLS GET with the Accept it
// is given — `application/pdf` or `text/csv` — the body read as it arrives and only
// counted, never held. A CSV's data rows are its lines less the header (no seeded
// value holds a line break); a PDF must start with `%PDF-`, end with `%%EOF`, and its
// pages are counted from their dictionaries (`/Type /Page`, which pdfkit leaves
// uncompressed). Reads its job as JSON from argv[2]; prints `MEASURING` just before
// the request and `RESULT <json>` at the end.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { announceMeasuring, oneRequestResult, printResult } from './result.ts';

export interface PrintJob {
  readonly origin: string;
  readonly path: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly accept: 'application/pdf' | 'text/csv';
  /** Data rows a CSV must have. */
  readonly rows: number;
}

const PAGE = '/Type /Page\n';

interface Answer {
  readonly status: number; readonly contentType: string; readonly bytes: number; readonly ended: boolean;
  readonly lines: number; readonly pages: number; readonly head: string; readonly tail: string; readonly error: string | null;
}

function fetchList(job: PrintJob): Promise<Answer> {
  const url = new URL(job.origin);
  return new Promise((resolve) => {
    const req = https.request({
      host: url.hostname, port: url.port, path: job.path, servername: 'localhost', agent: false, headers: { accept: job.accept },
      cert: readFileSync(job.certFile), key: readFileSync(job.keyFile), rejectUnauthorized: false, minVersion: 'TLSv1.2',
    }, (res) => {
      let bytes = 0;
      let lines = 0;
      let pages = 0;
      let head = '';
      let tail = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = 0; i < chunk.length; i++) if (chunk[i] === 0x0a) lines++;
        // The end of the chunk before, so that a page's mark split between two chunks is counted once.
        const text = tail + chunk.toString('latin1');
        for (let at = text.indexOf(PAGE); at >= 0; at = text.indexOf(PAGE, at + 1)) if (at + PAGE.length > tail.length) pages++;
        if (head.length < 300) head += text.slice(tail.length, tail.length + 300);
        tail = text.slice(-Math.max(PAGE.length, 16));
      });
      res.on('close', () => resolve({
        status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), bytes, ended: res.complete, lines, pages, head, tail,
        error: res.statusCode === 200 ? null : head,
      }));
    });
    req.on('error', (e) => resolve({ status: 0, contentType: '', bytes: 0, ended: false, lines: 0, pages: 0, head: '', tail: '', error: e.message }));
    req.end();
  });
}

/** Why the answer is not the expected list, or null. */
function problemOf(job: PrintJob, a: Answer): string | null {
  if (!a.contentType.startsWith(job.accept)) return `content-type ${a.contentType}`;
  if (!a.ended) return `the body stopped after ${a.bytes} bytes`;
  if (job.accept === 'text/csv') return a.lines - 1 === job.rows ? null : `${a.lines - 1} data rows, not ${job.rows}`;
  if (!a.head.startsWith('%PDF-') || !a.tail.trimEnd().endsWith('%%EOF')) return 'no PDF from %PDF- to %%EOF';
  // At most 55 rows fit a page (src/print/list-pdf.ts); fewer pages cannot hold them all.
  return a.pages >= Math.ceil(job.rows / 55) ? null : `${a.pages} pages for ${job.rows} rows`;
}

async function main(job: PrintJob): Promise<void> {
  announceMeasuring();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const a = await fetchList(job);
  const ms = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  const problem = a.status === 200 ? problemOf(job, a) : null;
  printResult({
    ...oneRequestResult({ ms, used, status: a.status, bytes: a.bytes, problem, error: a.error, records: job.accept === 'text/csv' ? a.lines - 1 : job.rows }),
    ...(job.accept === 'application/pdf' ? { pages: a.pages } : {}),
  });
}

await main(JSON.parse(process.argv[2]!) as PrintJob);
