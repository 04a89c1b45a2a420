import { readFileSync } from 'node:fs';
import { addClient, listClients, revokeClient } from '../admin/accounts.ts';
import { type Command, output, positiveInt, requiredString } from './command.ts';
import { withDatabase } from './database.ts';

export const clientAdd: Command = {
  words: ['client', 'add'],
  usage: 'client add --company ID --cert FILE [--name N] [--impersonation] [--json]',
  summary: 'Registers the public key of the certificate in FILE for the company; prints its id and SPKI fingerprint.\n'
    + '--impersonation lets it log users in (sessions); --name defaults to the certificate\'s CN.',
  options: { company: { type: 'string' }, cert: { type: 'string' }, name: { type: 'string' }, impersonation: { type: 'boolean' } },
  async run(args) {
    const companyId = positiveInt(requiredString(args, 'company', this.usage), '--company');
    const certPem = readFileSync(requiredString(args, 'cert', this.usage), 'utf8');
    const info = await withDatabase((d) => addClient(d, {
      companyId, certPem, impersonation: args.values.impersonation === true,
      ...(typeof args.values.name === 'string' ? { name: args.values.name } : {}),
    }));
    output(args, `${info.id} ${info.fingerprint}`, info);
  },
};

export const clientList: Command = {
  words: ['client', 'list'],
  usage: 'client list [--json]',
  summary: 'Lists the registered certificates: id, company, fingerprint, active or revoked, impersonation, name.',
  async run(args) {
    const clients = await withDatabase(listClients);
    const lines = clients.map((c) => `${c.id}\tcompany ${c.companyId}\t${c.fingerprint}\t${c.revoked ? `revoked ${c.revoked}` : 'active'}`
      + `${c.impersonation ? '\timpersonation' : ''}\t${c.name}`);
    output(args, lines.join('\n') || 'no certificates registered', clients);
  },
};

export const clientRevoke: Command = {
  words: ['client', 'revoke'],
  usage: 'client revoke ID [--json]',
  summary: 'Revokes the certificate with that id (see client list): it is refused from then on, and its sessions end.',
  positionals: 1,
  async run(args) {
    const id = positiveInt(args.positionals[0], 'ID');
    await withDatabase((d) => revokeClient(d, id));
    output(args, `revoked certificate ${id}`, { id, revoked: true });
  },
};
