// The calendar feed, read by a real iCalendar parser: one all-day event per asset
// of the user's scope due in the next twelve months or overdue, with UIDs that stay
// the same; the link is made, replaced and turned off on /account (forms with the
// session's token), only its hash is stored, and a link that is no live one is a
// missing page. Another company's assets never appear.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import ical, { type VEvent } from 'node-ical';
import { addDays, addMonths, formatDate } from '../../src/model/dates.ts';
import { DB_KINDS } from '../support/harness.ts';
import { Browser, type PortalService, portalUser, startPortal } from '../support/portal.ts';
import { create } from '../http/resources-support.ts';

const LINK = /value="https:\/\/[^"/]+(\/calendar\/([0-9a-f]{64})\.ics)"/;

const summaryOf = (e: VEvent): string => (typeof e.summary === 'string' ? e.summary : e.summary.val);

function events(text: string): VEvent[] {
  return Object.values(ical.sync.parseICS(text)).filter((c): c is VEvent => c?.type === 'VEVENT')
    .sort((a, b) => summaryOf(a).localeCompare(summaryOf(b)));
}

const day = (e: VEvent) => {
  const d = e.start;
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

for (const kind of DB_KINDS) {
  describe(`portal calendar feed (${kind})`, () => {
    let svc: PortalService;
    let today: string;
    let acme: number, other: number;
    const ids: Record<string, number> = {};
    before(async () => {
      svc = await startPortal(kind);
      today = formatDate(svc.clock.now());
      acme = await svc.company('Acme');
      const north = await svc.company('Acme North', acme);
      other = await svc.company('Other');
      const api = (await svc.certificate(acme)).client;
      const northApi = (await svc.certificate(north)).client;
      const otherApi = (await svc.certificate(other)).client;
      ids.late = await create(api, 'assets', { asset_no: 'A-LATE', description: 'Pressure gauge', next_check: addDays(today, -40) });
      ids.soon = await create(api, 'assets', { asset_no: 'A-SOON', description: 'Torque wrench', next_check: addDays(today, 20) });
      ids.year = await create(api, 'assets', { asset_no: 'A-YEAR', description: 'Caliper', next_check: addMonths(today, 12) });
      await create(api, 'assets', { asset_no: 'A-FAR', description: 'Beyond a year', next_check: addDays(addMonths(today, 12)!, 1) });
      await create(api, 'assets', { asset_no: 'A-NONE', description: 'No date' });
      ids.north = await create(northApi, 'assets', { asset_no: 'N-1', description: 'Thermometer', next_check: addDays(today, 3) });
      await create(otherApi, 'assets', { asset_no: 'THEIRS', description: 'Not yours', next_check: addDays(today, 3) });
    });
    after(() => svc.close());

    async function signedIn(companyId: number, level: 'readonly' | 'user' = 'user') {
      const user = await portalUser(svc, companyId, level);
      const browser = new Browser(svc.portalPort);
      await browser.signIn(user.username, user.password);
      return { browser, user };
    }

    async function makeLink(browser: Browser): Promise<{ path: string; token: string }> {
      const page = await browser.post('/account/calendar', { csrf: await browser.formToken() });
      assert.equal(page.status, 200);
      const m = LINK.exec(page.text);
      assert.ok(m, 'the new link is shown');
      return { path: m[1]!, token: m[2]! };
    }

    it('one all-day event per due or overdue asset of the scope, summary "asset_no description", UIDs stable', async () => {
      const { browser } = await signedIn(acme, 'readonly');
      const account = await browser.get('/account');
      assert.match(account.text, /You have no calendar link/);
      assert.match(account.text, /Make a calendar link/);
      const { path } = await makeLink(browser);
      const reader = new Browser(svc.portalPort);
      const first = await reader.get(path);
      assert.equal(first.status, 200);
      assert.match(String(first.headers['content-type']), /^text\/calendar; charset=utf-8/);
      assert.match(first.text, /^BEGIN:VCALENDAR\r\nVERSION:2\.0\r\n/);
      assert.match(first.text, /END:VCALENDAR\r\n$/);
      const list = events(first.text);
      assert.deepEqual(list.map(summaryOf), ['A-LATE Pressure gauge', 'A-SOON Torque wrench', 'A-YEAR Caliper', 'N-1 Thermometer']);
      assert.deepEqual(list.map(day), [addDays(today, -40), addDays(today, 20), addMonths(today, 12), addDays(today, 3)]);
      assert.ok(list.every((e) => e.datetype === 'date'), 'all-day events');
      assert.ok(!first.text.includes('THEIRS') && !first.text.includes('A-FAR') && !first.text.includes('A-NONE'));
      const again = events((await reader.get(path)).text);
      assert.deepEqual(again.map((e) => e.uid), list.map((e) => e.uid));
      assert.equal(new Set(list.map((e) => e.uid)).size, 4);
      assert.ok(list[0]!.uid.includes(String(ids.late)));
      const later = await browser.get('/account');
      assert.match(later.text, /You have a calendar link, made /);
      assert.ok(!LINK.test(later.text), 'the link is shown only when it is made');
    });

    it('only the hash is stored; replacing ends the old link, turning off ends the link; unknown and malformed → 404', async () => {
      const { browser, user } = await signedIn(acme);
      const first = await makeLink(browser);
      const rows = await svc.database.db.selectFrom('calendar_feeds').select(['token_hash']).where('user_id', '=', user.id).execute();
      assert.equal(rows.length, 1);
      assert.notEqual(rows[0]!.token_hash, first.token);
      assert.ok(!rows[0]!.token_hash.includes(first.token));
      const second = await makeLink(browser);
      assert.notEqual(second.token, first.token);
      assert.equal((await browser.get(first.path)).status, 404);
      assert.equal((await browser.get(second.path)).status, 200);
      const off = await browser.post('/account/calendar/off', { csrf: await browser.formToken() });
      assert.equal(off.status, 303);
      assert.match((await browser.get('/account?calendar=off')).text, /Your calendar link was turned off/);
      const gone = await browser.get(second.path);
      assert.equal(gone.status, 404);
      assert.match(gone.text, /There is no such page or record/);
      assert.equal((await browser.get(`/calendar/${'0'.repeat(64)}.ics`)).status, 404);
      assert.equal((await browser.get(`/calendar/${second.token.slice(1)}.ics`)).status, 404);
      assert.equal((await browser.get(`/calendar/${second.token}`)).status, 404);
    });

    it('the forms need the session\'s form token: without it 403 and nothing changes', async () => {
      const { browser, user } = await signedIn(acme);
      const link = await makeLink(browser);
      const refused = await browser.post('/account/calendar', { csrf: 'f'.repeat(64) });
      assert.equal(refused.status, 403);
      const refusedOff = await browser.post('/account/calendar/off', {});
      assert.equal(refusedOff.status, 403);
      assert.equal((await browser.get(link.path)).status, 200, 'the link still works');
      const signedOut = new Browser(svc.portalPort);
      const anonymous = await signedOut.post('/account/calendar', {});
      assert.equal(anonymous.status, 403);
      const count = await svc.database.db.selectFrom('calendar_feeds').select('user_id').where('user_id', '=', user.id).execute();
      assert.equal(count.length, 1);
    });

    it('another company\'s link shows only its own assets; a deleted user\'s link is gone', async () => {
      const { browser, user } = await signedIn(other);
      const { path } = await makeLink(browser);
      const list = events((await new Browser(svc.portalPort).get(path)).text);
      assert.deepEqual(list.map(summaryOf), ['THEIRS Not yours']);
      const otherApi = (await svc.certificate(other)).client;
      const removed = await otherApi.request('DELETE', `/3.0/users/id=${user.id}`);
      assert.equal(removed.status, 200, removed.text);
      assert.equal((await new Browser(svc.portalPort).get(path)).status, 404);
    });
  });
}
