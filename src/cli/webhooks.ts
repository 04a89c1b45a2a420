// asset-tracker webhooks rotate|dispatch|redeliver.
import { loadConfig } from '../config.ts';
import { Dispatcher } from '../webhooks/dispatcher.ts';
import { redeliver, rotateSecret } from '../admin/webhooks.ts';
import { type Command, output, positiveInt } from './command.ts';
import { withDatabase } from './database.ts';

export const webhooksRotate: Command = {
  words: ['webhooks', 'rotate'],
  usage: 'webhooks rotate ID [--json]   (prints the new secret once; the old one signs too for 24 h)',
  positionals: 1,
  async run(args) {
    const id = positiveInt(args.positionals[0], 'ID');
    const r = await withDatabase((d) => rotateSecret(d, id));
    output(args, `${r.secret}\n(the previous secret signs deliveries too until ${r.previousUntil} UTC)`, { id, ...r });
  },
};

export const webhooksDispatch: Command = {
  words: ['webhooks', 'dispatch'],
  usage: 'webhooks dispatch [--json]   (one pass: queue new events, make every due attempt)',
  async run(args) {
    const { webhooks } = loadConfig();
    const r = await withDatabase(async (d) => {
      const dispatcher = new Dispatcher(d, webhooks);
      return { ...await dispatcher.pass(), backlog: await dispatcher.backlog() };
    });
    output(args, `queued ${r.queued} deliveries, made ${r.attempted} attempts, ${r.backlog} waiting`, r);
  },
};

export const webhooksRedeliver: Command = {
  words: ['webhooks', 'redeliver'],
  usage: 'webhooks redeliver EVENT_ID [--json]',
  positionals: 1,
  async run(args) {
    const eventId = String(args.positionals[0]);
    const n = await withDatabase((d) => redeliver(d, eventId));
    output(args, `queued event ${eventId} again for ${n} webhook${n === 1 ? '' : 's'}`, { event_id: eventId, webhooks: n });
  },
};
