// The instance's heartbeat: a serving process writes its row in the instances
// table at start-up, then every few seconds, and deletes it once it has stopped
// serving. Other instances read it to tell a claim of a live process from one left
// by a process that died (an Idempotency-Key claim, db/idempotency.ts). It is no
// job of the jobs table: it must beat from before the first request to after the
// last one, whatever the jobs do during a shutdown.
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { beat, INSTANCE_STALE_MS, retire } from '../db/instances.ts';

/** A third of the time after which an instance counts as dead: two beats may fail or be late before it does. */
export const BEAT_EVERY_MS = INSTANCE_STALE_MS / 3;

export class Heartbeat {
  /** Unique per process start: a restarted process is another instance. */
  readonly id = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();

  constructor(private readonly database: Database, private readonly onError: (err: unknown) => void) {}

  /** The first beat (awaited: the instance serves only once it is known alive), then one every BEAT_EVERY_MS. */
  async start(): Promise<void> {
    await beat(this.database, this.id, Date.now());
    this.timer = setInterval(() => {
      this.beating = this.beating.then(() => beat(this.database, this.id, Date.now())).catch(this.onError);
    }, BEAT_EVERY_MS);
    this.timer.unref();
  }

  /** No more beats; the row goes, so what this instance still claims may be taken over at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await retire(this.database, this.id).catch(this.onError);
  }
}
