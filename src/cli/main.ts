#!/usr/bin/env node
// asset-tracker: the operator's one executable (spec §12).
import { AdminError } from '../admin.ts';
import { ConfigError } from '../config.ts';
import { ApiError } from '../errors.ts';
import { certCreate } from './cert.ts';
import { clientAdd, clientList, clientRevoke } from './client.ts';
import { type Command, parseCommandArgs, UsageError } from './command.ts';
import { companyAdd } from './company.ts';
import { demo } from './demo.ts';
import { migrateCommand } from './migrate.ts';
import { remindersRun } from './reminders.ts';
import { serve } from './serve.ts';
import { userAdd } from './user.ts';

const COMMANDS: readonly Command[] = [
  serve, demo, migrateCommand, companyAdd, certCreate, clientAdd, clientList, clientRevoke, userAdd, remindersRun,
];

const help = () => `usage: asset-tracker <command>\n\n${COMMANDS.map((c) => `  ${c.usage}`).join('\n')}\n`;

function find(argv: readonly string[]): { command: Command; rest: readonly string[] } | null {
  for (const command of COMMANDS) {
    if (command.words.every((w, i) => argv[i] === w)) return { command, rest: argv.slice(command.words.length) };
  }
  return null;
}

async function main(argv: readonly string[]): Promise<number> {
  const found = find(argv);
  if (!found) {
    const asked = argv[0] === undefined || argv[0] === 'help' || argv[0] === '--help';
    (asked ? process.stdout : process.stderr).write(help());
    return asked ? 0 : 2;
  }
  try {
    await found.command.run(parseCommandArgs(found.command, found.rest));
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
