import { addUser, AdminError, setPassword } from '../admin/accounts.ts';
import { listUsers } from '../admin/users.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from '../auth/passwords.ts';
import { LEVELS } from '../resources/users.ts';
import type { Level } from '../model/types.ts';
import { withDatabase } from './database.ts';
import { type Command, output, positiveInt, requiredString, UsageError } from './command.ts';

export const userAdd: Command = {
  words: ['user', 'add'],
  usage: 'user add --company ID --username U --email E [--level readonly|user|admin] [--password-stdin] [--json]',
  summary: `Creates a user of the company exactly as PUT /3.0/users would, and prints its id.
  --level           access level in sessions (default user)
  --password-stdin  reads the password from the first line of standard input (never an argument, which ps would show)`,
  options: {
    company: { type: 'string' }, username: { type: 'string' }, email: { type: 'string' }, level: { type: 'string' },
    'password-stdin': { type: 'boolean' },
  },
  async run(args) {
    const companyId = positiveInt(requiredString(args, 'company', this.usage), '--company');
    const level = args.values.level;
    if (level !== undefined && !(LEVELS as readonly unknown[]).includes(level)) throw new UsageError(`--level must be one of ${LEVELS.join(', ')}`);
    const username = requiredString(args, 'username', this.usage);
    const email = requiredString(args, 'email', this.usage);
    const password = args.values['password-stdin'] === true ? await readPassword() : null;
    const id = await withDatabase(async (d) => {
      const created = await addUser(d, { companyId, username, email, ...(level ? { level: level as Level } : {}) });
      if (password !== null) await setPassword(d, created, password);
      return created;
    });
    output(args, String(id), { id, username, company_id: companyId });
  },
};

export const userList: Command = {
  words: ['user', 'list'],
  usage: 'user list [--company ID] [--json]',
  summary: 'Lists users (of one company with --company): id, company, username, email, level, and whether they take reminders and have a password.',
  options: { company: { type: 'string' } },
  async run(args) {
    const companyId = args.values.company === undefined ? null : positiveInt(args.values.company, '--company');
    const users = await withDatabase((d) => listUsers(d, companyId));
    const lines = users.map((u) => [u.id, `company ${u.companyId}`, u.username, u.email, u.level + (u.canCreateCompanies ? '+companies' : ''),
      u.reminders ? 'reminders' : 'no reminders', u.hasPassword ? 'password set' : 'no password'].join('\t'));
    output(args, lines.join('\n') || 'no users', users);
  },
};

/** The password is the first line of standard input (never an argument, which `ps` would show). */
async function readPassword(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) throw new AdminError(`a password needs ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  return password;
}
