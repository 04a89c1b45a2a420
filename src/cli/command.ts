// The shape of a CLI command and the one way commands print: a short human
// line, or JSON with --json.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface Command {
  /** Words after `asset-tracker` that select the command, e.g. ['client', 'add']. */
  readonly words: readonly string[];
  readonly usage: string;
  /** What `--help` prints below the usage line: what the command does, and its options. */
  readonly summary?: string;
  readonly options?: ParseArgsConfig['options'];
  /** Number of positional arguments the command takes. */
  readonly positionals?: number;
  run(args: Args): Promise<void>;
}

export interface Args {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
  readonly json: boolean;
  /** `--help` was given: the command prints its help instead of running. */
  readonly help: boolean;
}

export class UsageError extends Error {}

export function parseCommandArgs(command: Command, argv: readonly string[]): Args {
  const { values, positionals } = parseArgs({
    args: [...argv], allowPositionals: true, strict: true,
    options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help === true) return { values: {}, positionals: [], json: false, help: true };
  if (positionals.length !== (command.positionals ?? 0)) throw new UsageError(`usage: asset-tracker ${command.usage}`);
  const plain: Record<string, string | boolean | undefined> = {};
  for (const [k, v] of Object.entries(values)) plain[k] = Array.isArray(v) ? String(v[v.length - 1]) : v;
  return { values: plain, positionals, json: values.json === true, help: false };
}

/** A command's `--help`: its usage line, then what it does. */
export const commandHelp = (command: Command): string =>
  `usage: asset-tracker ${command.usage}\n${command.summary ? `\n${command.summary.trim()}\n` : ''}`;

export function output(args: Args, human: string, data: unknown): void {
  process.stdout.write(args.json ? `${JSON.stringify(data)}\n` : `${human}\n`);
}

export function requiredString(args: Args, name: string, usage: string): string {
  const v = args.values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required\nusage: asset-tracker ${usage}`);
  return v;
}

export function positiveInt(value: string | boolean | undefined, name: string): number {
  const n = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || n < 1) throw new UsageError(`${name} must be a positive integer`);
  return n;
}
