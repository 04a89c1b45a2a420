// Idempotency-Key. A PUT, POST or DELETE with a key claims it before
// it runs; the write keeps its reply in its own transaction (Ctx.seal), so a retry
// after any failure either finds the reply — and gets it again — or finds nothing
// and runs. A request that keeps no reply (refused, failed, or one that wrote
// nothing, such as a dry run) lets the key go. A retry while the first request
// still runs waits for it a little, then gets 409; the same key with another verb,
// path or body gets 422.
//
// The reply is kept as its status, its `response` member and the time its envelope
// showed; the envelope is written again around it, so the same caller gets the same
// bytes, and no session token is ever stored.
import { createHash, randomBytes } from 'node:crypto';
import type { Database, Db } from '../db/database.ts';
import { claimKey, type Fingerprint, type KeptReply, type KeyOwner, keepReply, releaseKey } from '../db/idempotency.ts';
import { INSTANCE_STALE_MS } from '../db/instances.ts';
import { idempotencyInFlight, idempotencyMismatch, invalidValue } from '../errors.ts';
import { formatDatetime } from '../model/dates.ts';
import type { Principal } from '../model/principal.ts';
import type { Reply } from '../engine/types.ts';

/** 1–255 printable ASCII characters. */
const KEY = /^[\x20-\x7e]{1,255}$/;
const DAY_MS = 86_400_000;
/**
 * A claim whose request outlives this (no request may: see connections.ts) was left by a process that died.
 * A serving instance's claims carry its heartbeat too, and are taken over once it stops beating (db/instances.ts).
 */
const LEASE_MS = 5 * 60_000;
const POLL_MS = 25;

/** The request's Idempotency-Key (null when none was sent); a malformed one is 400. */
export function readKey(values: readonly string[] | undefined): string | null {
  if (values === undefined) return null;
  if (values.length !== 1 || !KEY.test(values[0]!)) throw invalidValue('Idempotency-Key');
  return values[0]!;
}

export type Begun = { readonly kind: 'replay'; readonly reply: KeptReply } | { readonly kind: 'claimed'; readonly claim: Claim };

export interface KeyedRequest {
  readonly key: string;
  readonly principal: Principal;
  readonly verb: string;
  /** The path as the endpoint reads it (`/3.0/assets/id=3`, whatever empty segments it was sent with). */
  readonly path: string;
  /** How the body is read (JSON, or a CSV import): the same bytes read another way are another request. */
  readonly bodyKind: string;
  readonly body: Buffer;
  readonly now: Date;
}

/** Claims the key, or answers with the reply it holds; waits up to `waitMs` for a request still running with it. */
export async function beginKeyed(database: Database, r: KeyedRequest, waitMs: number, instance: string | null = null): Promise<Begun> {
  const owner: KeyOwner = { clientId: r.principal.clientId ?? 0, userId: r.principal.session?.userId ?? 0, key: r.key };
  const f: Fingerprint = { verb: r.verb, path: r.path, bodyHash: createHash('sha256').update(`${r.bodyKind}\n`).update(r.body).digest('hex') };
  const token = randomBytes(12).toString('hex');
  const started = Date.now();
  for (;;) {
    const now = r.now.getTime() + (Date.now() - started);
    const held = await claimKey(database, owner, f, {
      owner: token, now: formatDatetime(new Date(now)), leaseUntil: formatDatetime(new Date(now + LEASE_MS)),
      expires: formatDatetime(new Date(r.now.getTime() + DAY_MS)),
      instance, staleBefore: Date.now() - INSTANCE_STALE_MS,
    });
    if (held === 'claimed') return { kind: 'claimed', claim: new Claim(database, owner, token) };
    if (held === 'gone') continue;
    if (held.verb !== f.verb || held.path !== f.path || held.bodyHash !== f.bodyHash) throw idempotencyMismatch(r.key);
    if (held.reply) return { kind: 'replay', reply: held.reply };
    if (Date.now() + POLL_MS > started + waitMs) throw idempotencyInFlight(r.key);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** A key this request holds until its reply is kept or the key let go. */
export class Claim {
  constructor(private readonly database: Database, private readonly owner: KeyOwner, private readonly token: string) {}

  /** Ctx.seal for the request: keeps the reply (shown at `answered`) in the write's transaction. */
  sealer(answered: number): (db: Db, reply: Reply) => Promise<void> {
    return async (db, reply) => {
      // Another request took the claim over (this one outlived its lease): this write must not commit.
      if (!await keepReply(db, this.owner, this.token, { status: reply.status ?? 200, answered, response: reply.response })) {
        throw idempotencyInFlight(this.owner.key);
      }
    };
  }

  /** Lets the key go, unless a reply was kept (then nothing happens). */
  async release(): Promise<void> {
    await releaseKey(this.database, this.owner, this.token);
  }
}
