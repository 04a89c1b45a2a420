// asset-tracker export|import ENDPOINT --company ID: the API's CSV
// export and import, run by the operator for a company's tree (audited as the
// operator), without a certificate. A progress bar goes to stderr when it is a terminal.
import { readFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { csvExport } from '../engine/csv.ts';
import { importCsv } from '../engine/csv-import.ts';
import { countRecords } from '../engine/list.ts';
import { parseQuery, pathFilters } from '../engine/query.ts';
import { ApiError, noEndpoint, type RowError } from '../errors.ts';
import { createRegistry, hasOwnEndpoint, operatorContext } from '../resources/registry.ts';
import type { Database } from '../db/database.ts';
import { type Args, type Command, output, positiveInt, requiredString } from './command.ts';
import { withDatabase } from './database.ts';
import { ProgressBar } from './progress.ts';

/** The resource an export or import names: one with a list (and, to import, a PUT of the generic engine). */
function resourceNamed(name: string, verb: 'GET' | 'PUT') {
  const resource = createRegistry().resource(name);
  if (!resource || !resource.def.verbs.includes(verb) || (verb === 'PUT' && hasOwnEndpoint(name))) throw noEndpoint(name);
  return resource;
}

const companyOf = (args: Args, usage: string) => positiveInt(requiredString(args, 'company', usage), '--company');

export const exportCsv: Command = {
  words: ['export'],
  usage: 'export ENDPOINT --company ID',
  summary: 'Writes every record of the endpoint in the company\'s tree to stdout as CSV, as GET with Accept: text/csv does.',
  options: { company: { type: 'string' } },
  positionals: 1,
  async run(args) {
    const resource = resourceNamed(String(args.positionals[0]), 'GET');
    const company = companyOf(args, this.usage);
    await withDatabase(async (d: Database) => {
      const ctx = operatorContext(d, company);
      const query = parseQuery(resource.def, 'GET', pathFilters(), undefined, ctx.catalog.lookup, ctx.limits);
      const bar = new ProgressBar('exporting', 'records');
      const total = await countRecords(ctx, resource.def, query);
      bar.update(0, total);
      await pipeline(await csvExport(ctx, resource.def, query, (n) => bar.update(n, total)), process.stdout);
      bar.end();
    });
  },
};

export const importCsvCommand: Command = {
  words: ['import'],
  usage: 'import ENDPOINT --company ID FILE [--dry-run] [--json]',
  summary: 'Creates one record of the endpoint per row of the CSV file in the company (one transaction), as PUT with\n'
    + 'Content-Type: text/csv does; any bad row refuses the file and each is listed. --dry-run checks and writes nothing.',
  options: { company: { type: 'string' }, 'dry-run': { type: 'boolean' } },
  positionals: 2,
  async run(args) {
    const resource = resourceNamed(String(args.positionals[0]), 'PUT');
    const company = companyOf(args, this.usage);
    const text = await readFile(String(args.positionals[1]), 'utf8');
    const bar = new ProgressBar('importing', 'rows checked');
    const r = await withDatabase((d) => importCsv(operatorContext(d, company), resource, text, args.values['dry-run'] === true,
      undefined, (n, total) => bar.update(n, total)))
      .finally(() => bar.end())
      .catch((e: unknown) => {
        // Each refused row on a line of its own, after the message.
        if (e instanceof ApiError && e.code === 'invalid_rows') {
          const { errors } = JSON.parse(`{${e.extra}}`) as { errors: RowError[] };
          throw new ApiError(e.status, e.code, [e.message, ...errors.map((x) => `  row ${x.row}${x.field ? `, ${x.field}` : ''}: ${x.error}`)].join('\n'));
        }
        throw e;
      });
    if ('ids' in r) output(args, `created ${r.ids.length} records`, { records_inserted: r.ids.length, ids: r.ids });
    else output(args, `${r.valid} rows are valid; nothing written (dry run)`, { records_valid: r.valid });
  },
};
