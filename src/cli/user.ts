import { addUser } from '../admin.ts';
import { LEVELS } from '../resources/users.ts';
import type { Level } from '../model/types.ts';
import { withDatabase } from './database.ts';
import { type Command, output, positiveInt, requiredString, UsageError } from './command.ts';

export const userAdd: Command = {
  words: ['user', 'add'],
  usage: 'user add --company ID --username U --email E [--level readonly|user|admin] [--json]',
  options: { company: { type: 'string' }, username: { type: 'string' }, email: { type: 'string' }, level: { type: 'string' } },
  async run(args) {
    const companyId = positiveInt(requiredString(args, 'company', this.usage), '--company');
    const level = args.values.level;
    if (level !== undefined && !(LEVELS as readonly unknown[]).includes(level)) throw new UsageError(`--level must be one of ${LEVELS.join(', ')}`);
    const username = requiredString(args, 'username', this.usage);
    const email = requiredString(args, 'email', this.usage);
    const id = await withDatabase((d) => addUser(d, { companyId, username, email, ...(level ? { level: level as Level } : {}) }));
    output(args, String(id), { id, username, company_id: companyId });
  },
};
