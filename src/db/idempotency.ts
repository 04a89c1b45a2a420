// The stored side of Idempotency-Key: claims, replies and their expiry.
import { sql } from 'kysely';
import type { Database, Db } from './database.ts';
import { deleteInSlices } from './sweep.ts';

/** Whose key: a certificate, and the session's user (0 in basic mode). */
export interface KeyOwner { readonly clientId: number; readonly userId: number; readonly key: string }

/** What makes a request "the same request" again. */
export interface Fingerprint { readonly verb: string; readonly path: string; readonly bodyHash: string }

/** A reply as kept: its status, its envelope's time (Unix seconds) and its `response` member. */
export interface KeptReply { readonly status: number; readonly answered: number; readonly response: string }

/** A key as stored: its request, and the reply once there is one. */
export interface Held extends Fingerprint { readonly reply: KeptReply | null }

export interface Claiming {
  /** The claiming request's own token. */
  readonly owner: string;
  /** Now, when a claim left running may be taken over, and when the key is forgotten (datetimes). */
  readonly now: string;
  readonly leaseUntil: string;
  readonly expires: string;
  /** The claiming process's id in the instances' heartbeat table (null: the claim lasts until its lease runs out). */
  readonly instance: string | null;
  /** A claim whose instance has not beaten since this moment (Unix ms) was left by a process that died. */
  readonly staleBefore: number;
}

const same = (k: KeyOwner) => sql`client_id = ${k.clientId} AND user_id = ${k.userId} AND ${sql.ref('key')} = ${k.key}`;

interface HeldRow { verb: string; path: string; body_hash: string; status: number | null; answered: number | null; response: string | null }

/**
 * Claims the key for this request ('claimed'), or answers what holds it. An expired
 * key is forgotten first; a claim whose lease ran out, or whose instance stopped
 * beating (its process died), is taken over. 'gone': the key was let go meanwhile
 * (PostgreSQL), ask again.
 *
 * Nothing is written twice when a claim is taken over from a process that is in
 * fact alive: its reply is kept in its write's transaction only while it still owns
 * the claim (keepReply), so its write rolls back.
 */
export async function claimKey(database: Database, k: KeyOwner, f: Fingerprint, c: Claiming): Promise<'claimed' | 'gone' | Held> {
  return database.transaction(async (db) => {
    await sql`DELETE FROM idempotency_keys WHERE ${same(k)} AND expires <= ${c.now}`.execute(db);
    const inserted = await sql`INSERT INTO idempotency_keys (client_id, user_id, ${sql.ref('key')}, verb, path, body_hash, owner, locked_until, expires, instance)
      VALUES (${k.clientId}, ${k.userId}, ${k.key}, ${f.verb}, ${f.path}, ${f.bodyHash}, ${c.owner}, ${c.leaseUntil}, ${c.expires}, ${c.instance})
      ON CONFLICT (client_id, user_id, ${sql.ref('key')}) DO NOTHING`.execute(db);
    if (Number(inserted.numAffectedRows ?? 0) === 1) return 'claimed';
    const { rows: [row] } = await sql<HeldRow>`SELECT verb, path, body_hash, status, answered, response FROM idempotency_keys
      WHERE ${same(k)}`.execute(db);
    if (!row) return 'gone';
    const held: Held = {
      verb: row.verb, path: row.path, bodyHash: row.body_hash,
      reply: row.status === null ? null : { status: Number(row.status), answered: Number(row.answered), response: row.response ?? '' },
    };
    if (held.reply || held.verb !== f.verb || held.path !== f.path || held.bodyHash !== f.bodyHash) return held;
    const taken = await sql`UPDATE idempotency_keys SET owner = ${c.owner}, locked_until = ${c.leaseUntil}, instance = ${c.instance}
      WHERE ${same(k)} AND status IS NULL AND (locked_until <= ${c.now} OR (instance IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM instances i WHERE i.id = idempotency_keys.instance AND i.beat_at >= ${c.staleBefore})))`.execute(db);
    return Number(taken.numAffectedRows ?? 0) === 1 ? 'claimed' : held;
  });
}

/** Gives the claimed key its reply, in the caller's transaction; false when this request no longer holds the claim. */
export async function keepReply(db: Db, k: KeyOwner, owner: string, reply: KeptReply): Promise<boolean> {
  const r = await sql`UPDATE idempotency_keys SET status = ${reply.status}, answered = ${reply.answered}, response = ${reply.response}
    WHERE ${same(k)} AND owner = ${owner} AND status IS NULL`.execute(db);
  return Number(r.numAffectedRows ?? 0) === 1;
}

/** Lets the key go unless it holds a reply (the request was refused, failed, or wrote nothing: a retry runs again). */
export async function releaseKey(database: Database, k: KeyOwner, owner: string): Promise<void> {
  await sql`DELETE FROM idempotency_keys WHERE ${same(k)} AND owner = ${owner} AND status IS NULL`.execute(database.db);
}

/** Forgets the keys past their 24 hours; returns how many. */
export function pruneKeys(database: Database, now: string): Promise<number> {
  return deleteInSlices(database, 'idempotency_keys', sql`expires <= ${now}`);
}
