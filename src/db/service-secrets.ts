// Secrets the service keeps in its store by name — the key that signs the labels' status
// links, the one that signs unsubscribe links: made by whichever instance asks first, so
// every instance signs and checks alike, and replaced in one transaction.
import { randomBytes } from 'node:crypto';
import { formatDatetime } from '../model/dates.ts';
import type { Database } from './database.ts';

const read = (database: Database, name: string) =>
  database.db.selectFrom('service_secrets').select('secret').where('name', '=', name).executeTakeFirst();

/** The secret called `name`, made now (32 random bytes) when there is none yet. */
export async function serviceSecret(database: Database, name: string, now: Date): Promise<Buffer> {
  let row = await read(database, name);
  if (!row) {
    await database.db.insertInto('service_secrets')
      .values({ name, secret: randomBytes(32).toString('hex'), created: formatDatetime(now) })
      .onConflict((oc) => oc.column('name').doNothing()).execute();
    row = await read(database, name);
  }
  return Buffer.from(row!.secret, 'hex');
}

/** Replaces the secret called `name`: whatever it signed no longer verifies. */
export async function replaceServiceSecret(database: Database, name: string, now: Date): Promise<void> {
  const secret = randomBytes(32).toString('hex');
  await database.transaction(async (db) => {
    await db.deleteFrom('service_secrets').where('name', '=', name).execute();
    await db.insertInto('service_secrets').values({ name, secret, created: formatDatetime(now) }).execute();
  });
}
