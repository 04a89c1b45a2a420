// Heavy background work never stalls the service: a keep-alive client that makes a
// request every 2–6 s across a reminder run over 20,000 due assets (which writes
// 20,000 reminders, 40,000 messages and their audit entries and events) gets every
// answer, on the same connection or a fresh one, with no reset and no time-out.
// Before the run worked in slices with SQLite's writer on a thread of its own, the
// run held SQLite's event loop for its whole length, and a keep-alive client's next
// request met a connection the server had dropped meanwhile.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addUser } from '../../src/admin/accounts.ts';
import { runReminders } from '../../src/jobs/reminders.ts';
import { addDays, formatDate, formatDatetime } from '../../src/model/dates.ts';
import type { TestClient } from '../support/client.ts';
import { firstAssetId, insertAssets } from '../support/assets-seed.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { uniqueName } from '../support/workflows.ts';
import { start, stop } from './resources-support.ts';

const DUE_ASSETS = 20_000;
/** A request that has not been answered after this long counts as timed out. */
const ANSWER_WITHIN_MS = 5_000;

/** Deterministic gaps of 2–6 s between requests. */
function* gaps(): Generator<number> {
  let seed = 7;
  for (;;) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    yield 2000 + (seed % 4001);
  }
}

function answered(client: TestClient, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to GET ${path} within ${ANSWER_WITHIN_MS} ms`)), ANSWER_WITHIN_MS);
    client.get(path).then((r) => { clearTimeout(timer); resolve(r.status); }, (e: Error) => { clearTimeout(timer); reject(e); });
  });
}

for (const kind of DB_KINDS) {
  describe(`heavy work and keep-alive clients (${kind})`, () => {
    let svc: Service;
    let client: TestClient;
    let assetId: number;
    before(async () => {
      svc = await start(kind);
      const co = await svc.company(uniqueName('Heavy'));
      client = (await svc.certificate(co)).client;
      for (let u = 0; u < 2; u++) await addUser(svc.database, { companyId: co, username: uniqueName('heavy'), email: `${uniqueName('h')}@example.com` });
      const today = formatDate(svc.clock.now());
      const now = formatDatetime(svc.clock.now());
      await insertAssets(svc.database, Array.from({ length: DUE_ASSETS }, (_, i) => ({ company_id: co, asset_no: `H-${i}`, serial_no: '',
        description: '', status: 'Active', next_check: addDays(today, (i % 60) - 30), date_added: today, modified: now })));
      assetId = await firstAssetId(svc.database, co);
    });
    after(() => stop(svc));

    it('a client requesting every 2–6 s across a reminder run over 20,000 due assets gets every answer', async () => {
      const path = `/3.0/assets/id=${assetId}`;
      assert.equal(await answered(client, path), 200);
      let done = false;
      const run = runReminders(svc.database, svc.clock).finally(() => { done = true; });
      const statuses: number[] = [];
      const next = gaps();
      // Requests across the whole run, and one after it.
      while (!done || statuses.length === 0) {
        await new Promise((r) => setTimeout(r, next.next().value as number));
        statuses.push(await answered(client, path));
      }
      const result = await run;
      assert.deepEqual(result, { created: DUE_ASSETS, delivered: DUE_ASSETS, messages: 2 * DUE_ASSETS, failed: [] });
      assert.deepEqual(statuses, statuses.map(() => 200));
    });
  });
}
