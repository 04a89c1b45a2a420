// Registered client certificates, by SPKI fingerprint: looked up on every request,
// and answered — "unknown" included — from a bounded cache that never outlives a
// change to `clients`: on PostgreSQL it is emptied by every change notice; on
// SQLite an answer is kept with the data version it was read at, and serves only
// while no connection (this process's writer, or the CLI's) has committed since.
import { sql } from 'kysely';
import type { Changes } from './changes.ts';
import type { Database } from './database.ts';
import { Lru } from '../model/lru.ts';
import { Param } from './statements.ts';

export interface ActiveClient { readonly id: number; readonly company_id: number; readonly impersonation: boolean }

/** The channel on which changes to `clients` are announced (migration 0005's trigger names it too). */
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

/** SQLite: answers valid while the data version they were read at holds (one PRAGMA per request). */
class VersionedCache {
  private readonly entries = new Lru<string, { readonly version: number; readonly client: ActiveClient | null }>(10_000);
  constructor(private readonly version: () => number) {}

  async find(database: Database, fingerprint: string): Promise<ActiveClient | null> {
    const version = this.version();
    const known = this.entries.get(fingerprint);
    if (known?.version === version) return known.client;
    // Read after the version: a commit during the read leaves the entry stale, never wrong.
    const client = await lookup(database, fingerprint);
    this.entries.set(fingerprint, { version, client });
    return client;
  }
}

const caches = new WeakMap<Database, ClientCache | VersionedCache>();

/** The registered, non-revoked certificate with this fingerprint. */
export async function findActiveClient(database: Database, fingerprint: string): Promise<ActiveClient | undefined> {
  const { changes, dataVersion } = database;
  let cache = caches.get(database);
  if (!cache) {
    cache = changes ? new ClientCache(changes) : dataVersion ? new VersionedCache(dataVersion) : undefined;
    if (!cache) return (await lookup(database, fingerprint)) ?? undefined;
    caches.set(database, cache);
  }
  return (await cache.find(database, fingerprint)) ?? undefined;
}
