import { readFileSync } from 'node:fs';
import { addCompany } from '../admin/accounts.ts';
import { companyTree, MAX_REMINDER_DAYS, setCompany } from '../admin/company.ts';
import { type Command, output, positiveInt, requiredString, UsageError } from './command.ts';
import { withDatabase } from './database.ts';

export const companyAdd: Command = {
  words: ['company', 'add'],
  usage: 'company add --name N [--parent ID] [--json]',
  summary: 'Creates a company (under --parent, or as the top of a new tree) and prints its id.',
  options: { name: { type: 'string' }, parent: { type: 'string' } },
  async run(args) {
    const name = requiredString(args, 'name', this.usage);
    const parent = args.values.parent === undefined ? null : positiveInt(args.values.parent, '--parent');
    const id = await withDatabase((d) => addCompany(d, name, parent));
    output(args, String(id), { id, name, parent_id: parent });
  },
};

const SET_OPTIONS = ['approver', 'reminder-days', 'timezone', 'name', 'parent', 'logo', 'subdomain'];

function readLogo(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch {
    throw new UsageError(`--logo: cannot read ${file}`);
  }
}

export const companySet: Command = {
  words: ['company', 'set'],
  usage: 'company set ID [--approver CLIENT_ID|none] [--reminder-days N] [--timezone TZ] [--name N] [--parent ID] [--logo FILE|none] '
    + '[--subdomain NAME|none] [--json]',
  summary: `Changes a company, in one audited transaction:
  --approver CLIENT_ID  the registered certificate that releases the company's approval queue:
                        a live certificate of the company or of one of its ancestors (see client list);
                        --approver none: new assets need no approval
  --reminder-days N     reminder window in days, 0 to ${MAX_REMINDER_DAYS} (default 30)
  --timezone TZ         IANA time zone whose "today" the reminders use, e.g. Europe/Berlin (default UTC)
  --name N              the company's name
  --parent ID           moves the company (with everything below it) under another company
  --logo FILE           a PNG or JPEG (at most 1 MiB) the company portal shows for the company; none removes it
  --subdomain NAME      the first label of the host names on which the portal wears the company's look
                        ([a-z0-9-]{1,63}, one company each); none removes it`,
  options: {
    approver: { type: 'string' }, 'reminder-days': { type: 'string' }, timezone: { type: 'string' }, name: { type: 'string' },
    parent: { type: 'string' }, logo: { type: 'string' }, subdomain: { type: 'string' },
  },
  positionals: 1,
  async run(args) {
    const id = positiveInt(args.positionals[0], 'ID');
    const v = args.values;
    if (!SET_OPTIONS.some((o) => v[o] !== undefined)) throw new UsageError(`nothing to change\nusage: asset-tracker ${this.usage}`);
    const approver = v.approver === undefined ? undefined : v.approver === 'none' ? null : positiveInt(v.approver, '--approver');
    const days = v['reminder-days'];
    if (days !== undefined && (typeof days !== 'string' || !/^\d{1,9}$/.test(days) || Number(days) > MAX_REMINDER_DAYS)) {
      throw new UsageError(`--reminder-days must be a whole number of days from 0 to ${MAX_REMINDER_DAYS}`);
    }
    const changes = {
      ...(approver !== undefined ? { approver } : {}),
      ...(days !== undefined ? { reminderDays: Number(days) } : {}),
      ...(typeof v.timezone === 'string' ? { timeZone: v.timezone } : {}),
      ...(typeof v.name === 'string' ? { name: v.name } : {}),
      ...(v.parent !== undefined ? { parentId: positiveInt(v.parent, '--parent') } : {}),
      ...(typeof v.logo === 'string' ? { logo: v.logo === 'none' ? null : readLogo(v.logo) } : {}),
      ...(typeof v.subdomain === 'string' ? { subdomain: v.subdomain === 'none' ? null : v.subdomain } : {}),
    };
    const { company, changed } = await withDatabase((d) => setCompany(d, id, changes));
    const settings = [`approver ${company.approver ?? 'none'}`, `reminder days ${company.reminder_days ?? 'default (30)'}`,
      `time zone ${company.timezone ?? 'default (UTC)'}`];
    output(args, `${changed.length > 0 ? 'changed' : 'unchanged:'} company ${id} "${company.name}": ${settings.join(', ')}`, { ...company, changed });
  },
};

export const companyList: Command = {
  words: ['company', 'list'],
  usage: 'company list [--json]',
  summary: 'Shows the company trees: each company with its id, name and the settings it sets (approver, reminder days, time zone).',
  async run(args) {
    const tree = await withDatabase(companyTree);
    const labels = tree.map((c) => {
      const set = [c.approver === null ? '' : `approver ${c.approver}`, c.reminder_days === null ? '' : `reminder days ${c.reminder_days}`,
        c.timezone ?? ''].filter(Boolean);
      return `${c.id} ${c.name}${set.length ? `  [${set.join(', ')}]` : ''}`;
    });
    output(args, treeLines(tree.map((c) => c.depth), labels).join('\n') || 'no companies', tree);
  },
};

/** Lines of a tree given in walk order with each node's depth: `├─ ` and `└─ ` before children, `│  ` below open branches. */
export function treeLines(depths: readonly number[], labels: readonly string[]): string[] {
  // A node is the last of its siblings when no later node has its depth before one that is shallower.
  const last = depths.map((d, i) => {
    for (let j = i + 1; j < depths.length; j++) {
      if (depths[j]! < d) return true;
      if (depths[j] === d) return false;
    }
    return true;
  });
  const open: boolean[] = [];
  return labels.map((label, i) => {
    const d = depths[i]!;
    open[d] = !last[i];
    if (d === 0) return label;
    const trail = open.slice(1, d).map((o) => (o ? '│  ' : '   ')).join('');
    return `${trail}${last[i] ? '└─ ' : '├─ '}${label}`;
  });
}
