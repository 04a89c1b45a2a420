// assetchecks: a check moves its asset exactly once (dates, status, last_result), a
// back-dated one leaves it alone, standards must be in calibration, a failed standard's
// impact equals the filter query and rides on its `assetchecks.failed` event,
// corrections, deletes and concurrent checks of one asset — on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { runReminders } from '../../src/jobs/reminders.ts';
import { addDays } from '../../src/model/dates.ts';
import type { Asset, Inserted } from '../support/api.ts';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { auditOf, countRows, create, expectError, expectOk, list, one, start, stop, todayText, update } from './resources-support.ts';

const invalid = (field: string) => `Field verification failed, invalid value for ${field}`;
const point = (o: Record<string, unknown>) => ({ name: 'p', lower_limit: 9, upper_limit: 11, ...o });

for (const kind of DB_KINDS) {
  describe(`assetchecks (${kind})`, () => {
    let svc: Service;
    let top: number;
    let api: TestClient;
    let n = 0;
    const asset = (o: Record<string, unknown> = {}) => create(api, 'assets', { asset_no: `A-${++n}`, ...o });
    const check = (body: Record<string, unknown>) => create(api, 'assetchecks', body);

    before(async () => {
      svc = await start(kind);
      top = await svc.company('Top');
      api = (await svc.certificate(top)).client;
    });
    after(() => stop(svc));

    it('a check has the fields in order, its points with verdicts, and embeds its asset, file and standards', async () => {
      const std = await asset({ next_check: '2099-01-01' });
      const a = await asset({ period: 12 });
      const file = await create(api, 'files', { asset_id: a, description: 'certificate' });
      const id = await check({ asset_id: a, check_date: '2026-03-10', performed_by: 'Lab One', certificate_no: 'C-1', file_id: file,
        standard_ids: [String(std)], points: [point({ unit: 'V', nominal: 10, as_found: 10.5, uncertainty: 0.5 })], data: { room: 'B' } });
      const c = await one(api, 'assetchecks', id);
      assert.deepEqual(Object.keys(c), ['id', 'company_id', 'asset_id', 'check_type', 'check_date', 'performed_by', 'certificate_no', 'result',
        'points', 'standard_ids', 'file_id', 'next_check', 'data', 'created', 'modified', 'asset', 'file', 'standards', 'version']);
      assert.deepEqual([c.company_id, c.check_type, c.result, c.standard_ids, c.next_check, c.version], [top, 'calibration', 'pass', [std], '2027-03-10', 1]);
      assert.deepEqual(c.points, [{ name: 'p', unit: 'V', nominal: 10, lower_limit: 9, upper_limit: 11, as_found: 10.5, as_left: null,
        uncertainty: 0.5, found_verdict: 'pass', left_verdict: null, verdict: 'pass' }]);
      assert.deepEqual([c.asset?.id, c.file?.id, c.standards.map((s) => s.id)], [a, file, [std]]);
      const moved = await one(api, 'assets', a);
      assert.deepEqual([moved.last_check, moved.next_check, moved.last_result, moved.status, moved.version], ['2026-03-10', '2027-03-10', 'pass', 'Active', 2]);
      const entries = await auditOf(api, 'assets', a);
      assert.deepEqual(entries.map((e: { action: string }) => e.action), ['create', 'update']);
      assert.deepEqual(entries[1]!.newdata, { last_check: '2026-03-10', next_check: '2027-03-10', last_result: 'pass' });
    });

    it('a failed check marks the asset out of tolerance and keeps its next check; the next good one brings it back', async () => {
      const a = await asset({ period: 6, next_check: '2026-01-01' });
      await check({ asset_id: a, check_date: '2026-02-01', points: [point({ as_found: 12 })] });
      let s = await one(api, 'assets', a);
      assert.deepEqual([s.status, s.last_check, s.next_check, s.last_result], ['Out of tolerance', '2026-02-01', '2026-01-01', 'fail']);
      const adjusted = await check({ asset_id: a, check_date: '2026-02-03', points: [point({ as_found: 12, as_left: 10 })] });
      s = await one(api, 'assets', a);
      assert.deepEqual([s.status, s.last_check, s.next_check, s.last_result], ['Active', '2026-02-03', '2026-08-03', 'adjusted']);
      assert.equal((await one(api, 'assetchecks', adjusted)).next_check, '2026-08-03');
      await check({ asset_id: a, check_date: '2026-02-04', result: 'conditional', next_check: '2026-05-31' });
      s = await one(api, 'assets', a);
      assert.deepEqual([s.status, s.next_check, s.last_result], ['Active', '2026-05-31', 'conditional']);
    });

    it('a back-dated check is history only: the asset keeps its dates; a next check with it, or with a failure, is refused', async () => {
      const a = await asset({ period: 12 });
      await check({ asset_id: a, check_date: '2026-05-01', result: 'pass' });
      const before = await one(api, 'assets', a);
      const old = await check({ asset_id: a, check_date: '2026-04-01', result: 'fail' });
      const after = await one(api, 'assets', a);
      assert.deepEqual(after, before);
      assert.equal((await one(api, 'assetchecks', old)).next_check, null);
      expectError(await api.put('/3.0/assetchecks', { asset_id: a, check_date: '2026-03-01', result: 'pass', next_check: '2027-01-01' }), 400, invalid('next_check'));
      expectError(await api.put('/3.0/assetchecks', { asset_id: a, check_date: '2026-06-01', result: 'fail', next_check: '2027-01-01' }), 400, invalid('next_check'));
      expectError(await api.put('/3.0/assetchecks', { asset_id: a, check_date: '2026-06-01', result: 'pass', next_check: '2026-06-01' }), 400, invalid('next_check'));
      assert.deepEqual(await one(api, 'assets', a), before);
    });

    it('last_result is the latest check by date, then id, also within one PUT and after a delete; filterable and orderable', async () => {
      const a = await asset();
      const ids = expectOk<Inserted>(await api.put('/3.0/assetchecks', [
        { asset_id: a, check_date: '2026-06-01', result: 'pass' },
        { asset_id: a, check_date: '2026-03-01', result: 'fail' },
        { asset_id: a, check_date: '2026-06-01', result: 'conditional' },
      ]), 201).ids;
      let s = await one(api, 'assets', a);
      assert.deepEqual([s.last_check, s.last_result, s.status], ['2026-06-01', 'conditional', 'Active']);
      assert.ok((await list(api, `assets/last_result=conditional`)).some((x: { id: number }) => x.id === a));
      const ordered = expectOk<Asset[]>(await api.get('/3.0/assets/last_result!<NULL>', { headers: { 'x-api-result-order': 'last_result^' } }));
      const results = ordered.map((x) => x.last_result);
      assert.deepEqual(results, [...results].sort().reverse());
      expectOk(await api.delete(`/3.0/assetchecks/id=${ids[2]}`));
      s = await one(api, 'assets', a);
      assert.deepEqual([s.last_check, s.last_result, s.status], ['2026-06-01', 'pass', 'Active']);
      expectOk(await api.delete(`/3.0/assetchecks/asset_id=${a}`));
      s = await one(api, 'assets', a);
      assert.deepEqual([s.last_check, s.last_result], ['2026-06-01', null]);
    });

    it('a standard must be in calibration on the check date, else 409 naming the first such, and nothing is written', async () => {
      const good = await asset({ next_check: '2026-12-31' });
      const lapsed = await asset({ next_check: '2026-01-31' });
      const broken = await asset({ status: 'Out of tolerance' });
      const failed = await asset();
      await check({ asset_id: failed, check_date: '2026-02-01', result: 'fail' });
      const a = await asset();
      const checks = await countRows(svc, 'assets');
      const refuse = async (standards: number[], day: string, bad: number) => expectError(
        await api.put('/3.0/assetchecks', { asset_id: a, check_date: day, result: 'pass', standard_ids: standards }),
        409, `Data Error: standard asset ${bad} was not in calibration on ${day}`);
      await refuse([good, lapsed], '2026-02-01', lapsed);
      await refuse([broken, good], '2026-01-15', broken);
      await refuse([failed], '2026-02-01', failed);
      assert.equal(await countRows(svc, 'assets'), checks);
      assert.equal((await one(api, 'assets', a)).last_check, null);
      // Lapsed was still in calibration on its due date; without a check of its own on or before the
      // day, the failed standard's present state (out of tolerance) decides.
      await check({ asset_id: a, check_date: '2026-01-31', result: 'pass', standard_ids: [lapsed, good] });
      await refuse([failed], '2026-01-31', failed);
      // A standard's own check decides for dates after it: calibrated until 2026-07-01.
      const recal = await asset({ next_check: '2020-01-01' });
      await check({ asset_id: recal, check_date: '2026-01-01', result: 'pass', next_check: '2026-07-01' });
      await check({ asset_id: a, check_date: '2026-02-02', result: 'pass', standard_ids: [recal] });
      // Within one PUT, a standard's failure earlier in the array counts for the checks after it.
      expectError(await api.put('/3.0/assetchecks', [{ asset_id: recal, check_date: '2026-02-03', result: 'fail' },
        { asset_id: a, check_date: '2026-02-03', result: 'pass', standard_ids: [recal] }]), 409, `Data Error: standard asset ${recal} was not in calibration on 2026-02-03`);
      assert.equal((await one(api, 'assets', recal)).status, 'Active');
    });

    it("a failed standard's impact: the checks that used it since its last good check, in its event and as a filter query", async () => {
      const s = await asset({ next_check: '2099-01-01' });
      const [x, y, z] = [await asset(), await asset(), await asset()];
      await check({ asset_id: s, check_date: '2026-01-10', result: 'pass' });
      const early = await check({ asset_id: x, check_date: '2026-01-05', result: 'pass', standard_ids: [s] });
      const used = [
        await check({ asset_id: x, check_date: '2026-01-10', result: 'pass', standard_ids: [s] }),
        await check({ asset_id: y, check_date: '2026-02-01', result: 'pass', standard_ids: [z, s] }),
        await check({ asset_id: x, check_date: '2026-03-01', result: 'pass', standard_ids: [s] }),
      ];
      const failure = await check({ asset_id: s, check_date: '2026-03-01', result: 'fail' });
      const query = await list(api, `assetchecks/standards.id=${s}/check_date+2026-01-10/check_date-2026-03-01`);
      assert.deepEqual(query.map((c: { id: number }) => c.id), used);
      assert.ok(!used.includes(early));
      const { rows } = await sql<{ data: unknown }>`SELECT data FROM events WHERE event = 'assetchecks.failed' AND record_id = ${failure}`.execute(svc.database.db);
      assert.equal(rows.length, 1);
      const data = (typeof rows[0]!.data === 'string' ? JSON.parse(rows[0]!.data) : rows[0]!.data) as Record<string, unknown>;
      const { asset: _a, file: _f, standards: _s, ...plain } = await one(api, 'assetchecks', failure);
      assert.deepEqual(data, { ...plain, impacted_check_ids: used, impacted_asset_ids: [x, y].sort((p, q) => p - q) });
      const standards = await list(api, `assetchecks/standards.asset_no=A-${n - 3}`);
      assert.ok(standards.some((c: { id: number }) => c.id === used[1]));
      expectError(await api.get('/3.0/assetchecks', { headers: { 'x-api-result-order': 'standards.id' } }), 400, 'Malformed result ordering value: standards.id');
    });

    it('corrections change annotations only; the fact fields answer 409 and never-writable fields 400', async () => {
      const a = await asset();
      const id = await check({ asset_id: a, check_date: '2026-01-01', result: 'pass' });
      for (const body of [{ result: 'pass' }, { check_date: '2026-01-01' }, { points: [] }, { standard_ids: [] }, { next_check: null }, { check_type: 'pat' }]) {
        expectError(await api.post(`/3.0/assetchecks/id=${id}`, { ...body, performed_by: 'x' }), 409,
          `Data Error: assetchecks record ${id} is a record of fact; record a new check instead`);
      }
      for (const field of ['asset_id', 'company_id', 'id', 'created', 'modified', 'version']) {
        expectError(await api.post(`/3.0/assetchecks/id=${id}`, { [field]: 1 }), 400, `Field verification failed, invalid field ${field}`);
      }
      assert.deepEqual(await update(api, `assetchecks/id=${id}`, { performed_by: 'Lab', certificate_no: 'K-9', data: { note: 'ok' } }),
        { records_updated: 1, records_found: 1 });
      const c = await one(api, 'assetchecks', id);
      assert.deepEqual([c.performed_by, c.certificate_no, c.data, c.version], ['Lab', 'K-9', { note: 'ok' }, 2]);
    });

    it('assets with checks, standards still cited and certificate files cannot be deleted', async () => {
      const std = await asset();
      const a = await asset();
      const file = await create(api, 'files', { asset_id: a });
      await check({ asset_id: a, check_date: '2026-01-01', result: 'pass', standard_ids: [std], file_id: file });
      expectError(await api.delete(`/3.0/assets/id=${a}`), 409, `Data Error: assets record ${a} is still referenced by assetchecks`);
      expectError(await api.delete(`/3.0/assets/id=${std}`), 409, `Data Error: assets record ${std} is still referenced by assetchecks`);
      expectError(await api.delete(`/3.0/files/id=${file}`), 409, `Data Error: files record ${file} is still referenced by assetchecks`);
    });

    it('check types: the built-in ones and those of the company or its ancestors; the date not after today where the company is', async () => {
      const child = await svc.company('Child', top);
      await update(api, `companies/id=${top}`, { data: { check_types: ['torque audit'] } });
      const a = await create(api, 'assets', { asset_no: 'CT-1', company_id: child });
      for (const t of ['calibration', 'verification', 'inspection', 'pat', 'loler', 'service', 'torque audit']) {
        await check({ asset_id: a, check_date: '2026-01-01', result: 'pass', check_type: t });
      }
      for (const t of ['Calibration', 'PAT', 'other', '']) {
        expectError(await api.put('/3.0/assetchecks', { asset_id: a, check_date: '2026-01-01', result: 'pass', check_type: t }), 400, invalid('check_type'));
      }
      const tomorrow = addDays(todayText(svc), 1);
      expectError(await api.put('/3.0/assetchecks', { asset_id: a, check_date: tomorrow, result: 'pass' }), 400, invalid('check_date'));
      await update(api, `companies/id=${child}`, { data: { timezone: 'Pacific/Kiritimati' } });
      const there = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Kiritimati', year: 'numeric', month: '2-digit', day: '2-digit' })
        .format(svc.clock.now());
      await check({ asset_id: a, check_date: there, result: 'pass' });
    });

    it('reminders follow the date a check sets: a good check ends the reminding, a failed one keeps its asset reminded', async () => {
      const today = todayText(svc);
      const [good, bad] = [await asset({ next_check: addDays(today, 10), period: 12 }), await asset({ next_check: addDays(today, 10), period: 12 })];
      await check({ asset_id: good, check_date: today, result: 'pass' });
      await check({ asset_id: bad, check_date: today, result: 'fail' });
      await runReminders(svc.database, svc.clock);
      assert.deepEqual(await list(api, `assetreminders/asset_id=${good}`), []);
      assert.deepEqual((await list(api, `assetreminders/asset_id=${bad}`)).map((r: { due_date: string }) => r.due_date), [addDays(today, 10)]);
      assert.equal((await one(api, 'assets', bad)).status, 'Out of tolerance');
    });

    it('20 concurrent checks of one asset leave it matching its latest check (five rounds, days repeating)', async () => {
      for (let round = 0; round < 5; round++) {
        const a = await asset({ period: 3 });
        // Twenty checks over seven days: several share a day, and the latest by date, then id, decides.
        const days = Array.from({ length: 20 }, (_, i) => addDays('2026-01-01', (i * 3 + round) % 7));
        const results = days.map((_, i) => ((i + round) % 3 === 0 ? 'fail' : 'pass'));
        const answers = await Promise.all(days.map((d, i) => api.put('/3.0/assetchecks', { asset_id: a, check_date: d, result: results[i] })));
        for (const r of answers) assert.equal(r.status, 201, r.text);
        const checks = await list(api, `assetchecks/asset_id=${a}`);
        assert.equal(checks.length, 20);
        const latest = [...checks].sort((p, q) => (p.check_date === q.check_date ? q.id - p.id : q.check_date < p.check_date ? -1 : 1))[0]!;
        const s = await one(api, 'assets', a);
        assert.deepEqual([s.last_check, s.last_result, s.status], [latest.check_date, latest.result, latest.result === 'fail' ? 'Out of tolerance' : 'Active'],
          `round ${round}`);
      }
    });
  });
}
