#!/usr/bin/env node
// asset-tracker: the operator's one executable (spec §12).
import { AdminError } from '../admin.ts';
import { ConfigError } from '../config.ts';
import { ApiError } from '../errors.ts';
import { certCreate } from './cert.ts';
import { changesPrune } from './changes.ts';
import { exportCsv, importCsvCommand } from './csv.ts';
import { clientAdd, clientList, clientRevoke } from './client.ts';
import { backup } from './backup.ts';
import { type Command, commandHelp, parseCommandArgs, UsageError } from './command.ts';
import { companyAdd, companyList, companySet } from './company.ts';
import { demo } from './demo.ts';
import { jobsList, jobsRun } from './jobs.ts';
import { migrateCommand } from './migrate.ts';
import { remindersRun } from './reminders.ts';
import { serve } from './serve.ts';
import { userAdd, userList } from './user.ts';
import { openapi } from './openapi.ts';
import { version } from './version.ts';
import { webhooksDispatch, webhooksRedeliver, webhooksRotate } from './webhooks.ts';

const COMMANDS: readonly Command[] = [
  serve, demo, migrateCommand, companyAdd, companySet, companyList, certCreate, clientAdd, clientList, clientRevoke, userAdd, userList,
  remindersRun, jobsList, jobsRun, backup, openapi,
  webhooksRotate, webhooksDispatch, webhooksRedeliver, changesPrune, exportCsv, importCsvCommand,
];

const help = () => `usage: asset-tracker <command>\n\n${COMMANDS.map((c) => `  ${c.usage}`).join('\n')}\n`
  + '\n  asset-tracker <command> --help   what a command does\n  asset-tracker --version\n';

function find(argv: readonly string[]): { command: Command; rest: readonly string[] } | null {
  for (const command of COMMANDS) {
    if (command.words.every((w, i) => argv[i] === w)) return { command, rest: argv.slice(command.words.length) };
  }
  return null;
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === '--version' && argv.length === 1) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const found = find(argv);
  if (!found) {
    const asked = argv[0] === undefined || argv[0] === 'help' || argv[0] === '--help';
    (asked ? process.stdout : process.stderr).write(help());
    return asked ? 0 : 2;
  }
  try {
    const args = parseCommandArgs(found.command, found.rest);
    if (args.help) process.stdout.write(commandHelp(found.command));
    else await found.command.run(args);
    return 0;
  } catch (e) {
    if (e instanceof UsageError || (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    // A file the operator named that cannot be read or written (ENOENT, EACCES, ENOTDIR ...) is their
    // error to fix, not a crash: one line, no stack trace.
    const systemError = e instanceof Error && 'syscall' in e && 'path' in e;
    if (e instanceof ConfigError || e instanceof AdminError || e instanceof ApiError || systemError) {
      process.stderr.write(`error: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

const code = await main(process.argv.slice(2));
if (code !== 0) process.exitCode = code;
