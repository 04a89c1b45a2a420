// Only the CSV export step of `npm run bench` (after `npm run build`):
//   node --import tsx bench/export-only.ts
// It keeps the certificates of an earlier run under .bench/tls (the workloads'
// store stays as it is); without them it writes new ones, which empties .bench/.
import { existsSync, readFileSync } from 'node:fs';
import { formatDate } from '../src/model/dates.ts';
import { TLS_FILES } from './config.ts';
import { runExport } from './export.ts';
import { printExport, printFailures } from './report.ts';
import { writeCertificates } from './setup.ts';

const certPem = existsSync(TLS_FILES.clientCert) ? readFileSync(TLS_FILES.clientCert, 'utf8') : writeCertificates();
const row = await runExport(certPem, formatDate(new Date()));
printExport(row);
process.exitCode = printFailures(row) ? 1 : 0;
