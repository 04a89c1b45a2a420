import { addCompany } from '../admin.ts';
import { type Command, output, positiveInt, requiredString } from './command.ts';
import { withDatabase } from './database.ts';

export const companyAdd: Command = {
  words: ['company', 'add'],
  usage: 'company add --name N [--parent ID] [--json]',
  options: { name: { type: 'string' }, parent: { type: 'string' } },
  async run(args) {
    const name = requiredString(args, 'name', this.usage);
    const parent = args.values.parent === undefined ? null : positiveInt(args.values.parent, '--parent');
    const id = await withDatabase((d) => addCompany(d, name, parent));
    output(args, String(id), { id, name, parent_id: parent });
  },
};
