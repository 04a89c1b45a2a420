// asset-tracker jobs list | jobs run NAME: the background jobs of jobs/table.ts.
import { loadConfig } from '../config.ts';
import { JOBS } from '../jobs/table.ts';
import { systemClock } from '../model/dates.ts';
import { type Command, output, UsageError } from './command.ts';
import { withDatabase } from './database.ts';

const seconds = (ms: number) => (ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`);

export const jobsList: Command = {
  words: ['jobs', 'list'],
  usage: 'jobs list [--json]',
  summary: 'The background jobs every running instance runs: what each does, how often, and how instances share it.',
  async run(args) {
    const config = loadConfig();
    const list = JOBS.map((j) => ({ name: j.name, every_ms: j.everyMs(config), first_ms: j.firstMs, does: j.does, shared: j.shared }));
    output(args, list.map((j) => `${j.name.padEnd(17)} every ${seconds(j.every_ms).padEnd(7)} ${j.does}\n${' '.repeat(31)}several instances: ${j.shared}`).join('\n'),
      list);
  },
};

export const jobsRun: Command = {
  words: ['jobs', 'run'],
  usage: 'jobs run NAME [--json]',
  summary: 'One run of a background job now (jobs list names them), as a running instance makes it.',
  positionals: 1,
  async run(args) {
    const name = String(args.positionals[0]);
    const job = JOBS.find((j) => j.name === name);
    if (!job) throw new UsageError(`no job ${name}; jobs list names them`);
    const config = loadConfig();
    const result = await withDatabase((d) => job.start({ database: d, clock: systemClock, settings: config }).run(() => false));
    output(args, `${name}: ${Object.entries(result).map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(', ')}`, { job: name, ...result });
  },
};
