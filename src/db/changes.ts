// Change notices: a cache of rows that rarely change (registered certificates)
// may answer from memory only while it is sure to hear of every change. On
// PostgreSQL, triggers NOTIFY on commit and one dedicated connection LISTENs; while
// it is down the notices are not live and caches must read through. Changes made
// by this process are announced at once, without waiting for the round trip.
import pg from 'pg';

export interface Changes {
  /** True while every committed change to `channel` is sure to be heard. */
  live(channel: string): boolean;
  /** Calls `fn` after each change to `channel`, and whenever notices were lost (they went down). */
  subscribe(channel: string, fn: () => void): void;
  /** This process changed `channel`: tell its subscribers now. */
  announce(channel: string): void;
  close(): Promise<void>;
}

const RETRY_MS = 1000;

/** LISTEN on one connection of its own, reconnecting after any failure. */
export function listenPostgres(url: string): Changes {
  const handlers = new Map<string, Set<() => void>>();
  let client: pg.Client | null = null;
  let listening = new Set<string>();
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  const tell = (channel: string) => { for (const fn of handlers.get(channel) ?? []) fn(); };

  const down = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    const lost = listening;
    listening = new Set();
    for (const channel of lost) tell(channel);
    c.end().catch(() => {});
    if (!closed) retry ??= setTimeout(() => { retry = null; void connect(); }, RETRY_MS);
  };

  async function connect(): Promise<void> {
    if (closed || client) return;
    const c = new pg.Client({ connectionString: url });
    client = c;
    c.on('error', () => down(c));
    c.on('end', () => down(c));
    c.on('notification', (n) => tell(n.channel));
    try {
      await c.connect();
      for (const channel of handlers.keys()) await listen(c, channel);
    } catch {
      down(c);
    }
  }

  async function listen(c: pg.Client, channel: string): Promise<void> {
    await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    if (client !== c) return;
    listening.add(channel);
    // What changed before now was never cached under this listener: start afresh.
    tell(channel);
  }

  return {
    live: (channel) => listening.has(channel),
    subscribe(channel, fn) {
      const known = handlers.get(channel);
      if (known) { known.add(fn); return; }
      handlers.set(channel, new Set([fn]));
      if (client) void listen(client, channel).catch(() => down(client!));
      else void connect();
    },
    announce: tell,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      listening = new Set();
      await c?.end().catch(() => {});
    },
  };
}
