// Only the printed list step of `npm run bench` (after `npm run build`), on SQLite
// and, with BENCH_PG=1, on PostgreSQL:
//   node --import tsx bench/print-only.ts
// It keeps the certificates of an earlier run under .bench/tls (the other stores
// stay as they are); without them it writes new ones, which empties .bench/.
import { existsSync, readFileSync } from 'node:fs';
import { formatDate } from '../src/model/dates.ts';
import { TLS_FILES } from './config.ts';
import { runPrinted } from './print.ts';
import { printFailures, printPrinted } from './report.ts';
import { writeCertificates } from './setup.ts';

const certPem = existsSync(TLS_FILES.clientCert) ? readFileSync(TLS_FILES.clientCert, 'utf8') : writeCertificates();
const runs = await runPrinted(certPem, formatDate(new Date()));
printPrinted(runs);
process.exitCode = printFailures(null, [], runs) ? 1 : 0;
