#!/usr/bin/env node
// asset-tracker: the operator's one executable.
import { ConfigError } from '../config.ts';
import { AdminError, ApiError } from '../errors.ts';
import { type Command, commandHelp, parseCommandArgs, UsageError } from './command.ts';
import { version } from './version.ts';

/**
 * Every command, by the words that select it, and where it lives: a process loads only the
 * command it runs (a `company add` does not load the HTTP server), the listing loads them all.
 */
const COMMANDS: readonly { readonly words: string; load(): Promise<Command> }[] = [
  { words: 'serve', load: async () => (await import('./serve.ts')).serve },
  { words: 'demo', load: async () => (await import('./demo.ts')).demo },
  { words: 'migrate', load: async () => (await import('./migrate.ts')).migrateCommand },
  { words: 'company add', load: async () => (await import('./company.ts')).companyAdd },
  { words: 'company set', load: async () => (await import('./company.ts')).companySet },
  { words: 'company list', load: async () => (await import('./company.ts')).companyList },
  { words: 'cert create', load: async () => (await import('./cert.ts')).certCreate },
  { words: 'client add', load: async () => (await import('./client.ts')).clientAdd },
  { words: 'client list', load: async () => (await import('./client.ts')).clientList },
  { words: 'client revoke', load: async () => (await import('./client.ts')).clientRevoke },
  { words: 'user add', load: async () => (await import('./user.ts')).userAdd },
  { words: 'user list', load: async () => (await import('./user.ts')).userList },
  { words: 'reminders run', load: async () => (await import('./reminders.ts')).remindersRun },
  { words: 'mail test', load: async () => (await import('./mail.ts')).mailTest },
  { words: 'mail log', load: async () => (await import('./mail.ts')).mailLog },
  { words: 'reports weekly', load: async () => (await import('./mail.ts')).reportsWeekly },
  { words: 'jobs list', load: async () => (await import('./jobs.ts')).jobsList },
  { words: 'jobs run', load: async () => (await import('./jobs.ts')).jobsRun },
  { words: 'backup', load: async () => (await import('./backup.ts')).backup },
  { words: 'restore', load: async () => (await import('./backup.ts')).restore },
  { words: 'openapi', load: async () => (await import('./openapi.ts')).openapi },
  { words: 'webhooks rotate', load: async () => (await import('./webhooks.ts')).webhooksRotate },
  { words: 'webhooks dispatch', load: async () => (await import('./webhooks.ts')).webhooksDispatch },
  { words: 'webhooks redeliver', load: async () => (await import('./webhooks.ts')).webhooksRedeliver },
  { words: 'labels rotate', load: async () => (await import('./labels.ts')).labelsRotate },
  { words: 'changes prune', load: async () => (await import('./changes.ts')).changesPrune },
  { words: 'export', load: async () => (await import('./csv.ts')).exportCsv },
  { words: 'import', load: async () => (await import('./csv.ts')).importCsvCommand },
];

/** The command's own definition, which must be selected by the same words as its entry above. */
async function load(entry: (typeof COMMANDS)[number]): Promise<Command> {
  const command = await entry.load();
  if (command.words.join(' ') !== entry.words) throw new Error(`the command listed as "${entry.words}" is "${command.words.join(' ')}"`);
  return command;
}

async function help(): Promise<string> {
  const commands = await Promise.all(COMMANDS.map(load));
  return `usage: asset-tracker <command>\n\n${commands.map((c) => `  ${c.usage}`).join('\n')}\n`
    + '\n  asset-tracker <command> --help   what a command does\n  asset-tracker --version\n';
}

async function find(argv: readonly string[]): Promise<{ command: Command; rest: readonly string[] } | null> {
  for (const entry of COMMANDS) {
    const words = entry.words.split(' ');
    if (words.every((w, i) => argv[i] === w)) return { command: await load(entry), rest: argv.slice(words.length) };
  }
  return null;
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === '--version' && argv.length === 1) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const found = await find(argv);
  if (!found) {
    const asked = argv[0] === undefined || argv[0] === 'help' || argv[0] === '--help';
    (asked ? process.stdout : process.stderr).write(await help());
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
