// Registered client certificates, by SPKI fingerprint: looked up on every request.
// Where the database announces changes (PostgreSQL), answers — "unknown" included —
// come from a bounded cache that is emptied by every change to `clients`; elsewhere
// (SQLite) one prepared statement on the reader is cheaper than any bookkeeping.
import { sql } from 'kysely';
import type { Changes } from './changes.ts';
import type { Database } from './database.ts';
import { Lru } from './lru.ts';
import { Param } from './statements.ts';

export interface ActiveClient { readonly id: number; readonly company_id: number; readonly impersonation: boolean }

/** The channel on which changes to `clients` are announced (migration 0005's trigger). */
export const CLIENTS_CHANNEL = 'asset_tracker_clients';

const FINGERPRINT = new Param('fingerprint');

async function lookup(database: Database, fingerprint: string): Promise<ActiveClient | null> {
  const statement = database.statements.get('client-by-fingerprint',
    () => sql`SELECT id, company_id, impersonation FROM clients WHERE fingerprint = ${FINGERPRINT} AND revoked IS NULL`);
  const [c] = await database.read<{ id: number; company_id: number; impersonation: number }>(statement, { fingerprint });
  return c ? { id: Number(c.id), company_id: Number(c.company_id), impersonation: Number(c.impersonation) === 1 } : null;
}

class ClientCache {
  private readonly entries = new Lru<string, ActiveClient | null>(10_000);
  /** Bumped by every change: an answer read before a change is not kept after it. */
  private generation = 0;
  constructor(private readonly changes: Changes) {
    changes.subscribe(CLIENTS_CHANNEL, () => { this.generation++; this.entries.clear(); });
  }

  async find(database: Database, fingerprint: string): Promise<ActiveClient | null> {
    const live = this.changes.live(CLIENTS_CHANNEL);
    const known = live ? this.entries.get(fingerprint) : undefined;
    if (known !== undefined) return known;
    const generation = this.generation;
    const found = await lookup(database, fingerprint);
    if (live && generation === this.generation) this.entries.set(fingerprint, found);
    return found;
  }
}

const caches = new WeakMap<Database, ClientCache>();

/** The registered, non-revoked certificate with this fingerprint. */
export async function findActiveClient(database: Database, fingerprint: string): Promise<ActiveClient | undefined> {
  const { changes } = database;
  if (!changes) return (await lookup(database, fingerprint)) ?? undefined;
  let cache = caches.get(database);
  if (!cache) caches.set(database, (cache = new ClientCache(changes)));
  return (await cache.find(database, fingerprint)) ?? undefined;
}
