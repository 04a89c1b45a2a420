// The demo's check history: a year of calibrations of its reference standards and of
// the workshop's instruments that used them — passes, an adjustment, a conditional
// result, and a failed standard whose impacted checks its `assetchecks.failed` event
// and the filter query `assetchecks/standards.id=N/…` both list. Each check is dated so
// that it leaves its asset due exactly when the demo's asset list says.
import { createRecords } from '../engine/write.ts';
import { addDays, addMonths } from '../model/dates.ts';
import { type JsonObject, parseJson } from '../model/json.ts';
import { assetchecks } from '../resources/assetchecks.ts';
import type { Ctx } from '../engine/types.ts';

/** The demo's assets by number. */
export type DemoAssets = Readonly<Record<'TW-001' | 'TW-002' | 'CAL-01' | 'CAL-02' | 'SC-01' | 'FS-01', number>>;

const point = (name: string, unit: string, lower: number, upper: number, found: number, u: number, left?: number) =>
  ({ name, unit, nominal: (lower + upper) / 2, lower_limit: lower, upper_limit: upper, as_found: found, uncertainty: u,
    ...(left === undefined ? {} : { as_left: left }) });

export async function addDemoChecks(ctx: Ctx, today: string, a: DemoAssets, certificateFile: number): Promise<void> {
  const day = (n: number) => addDays(today, n);
  const before = (date: string, months: number) => addMonths(date, -months)!;
  const lab = 'Demo Labs';
  const checks = [
    { asset_id: a['TW-002'], check_date: before(day(-3), 12), performed_by: lab, standard_ids: [a['CAL-02']],
      points: [point('20 Nm', 'Nm', 19.2, 20.8, 20.1, 0.1), point('100 Nm', 'Nm', 96, 104, 101.2, 0.4)] },
    { asset_id: a['FS-01'], check_date: before(day(12), 12), check_type: 'inspection', performed_by: 'Field team', result: 'pass' },
    { asset_id: a['CAL-01'], check_date: before(day(5), 12), performed_by: 'National Calibration Lab', certificate_no: 'NCL-118',
      points: [point('10 V DC', 'V', 9.995, 10.005, 10.001, 0.0012)] },
    { asset_id: a['CAL-02'], check_date: before(day(20), 12), performed_by: 'National Calibration Lab', certificate_no: 'NCL-131',
      points: [point('10 bar', 'bar', 9.9, 10.1, 10.02, 0.02)] },
    { asset_id: a['TW-001'], check_date: before(day(-40), 12), performed_by: lab, standard_ids: [a['CAL-01']],
      points: [point('5 Nm', 'Nm', 4.8, 5.2, 5.03, 0.05), point('25 Nm', 'Nm', 24, 26, 25.2, 0.2)] },
    // Found out of tolerance, adjusted, certificate attached.
    { asset_id: a['CAL-01'], check_date: before(day(5), 6), performed_by: 'National Calibration Lab', certificate_no: 'NCL-204',
      file_id: certificateFile, points: [point('10 V DC', 'V', 9.995, 10.005, 10.012, 0.0012, 10.001)] },
    { asset_id: a['CAL-02'], check_date: before(day(20), 6), performed_by: 'National Calibration Lab', certificate_no: 'NCL-219',
      points: [point('10 bar', 'bar', 9.9, 10.1, 10.03, 0.02)] },
    // Interim checks against the pressure gauge, which then fails: both are its impact.
    { asset_id: a['TW-001'], check_date: day(-100), check_type: 'verification', performed_by: lab, standard_ids: [a['CAL-02']],
      next_check: day(-40), points: [point('25 Nm', 'Nm', 24, 26, 25.1, 0.2)] },
    { asset_id: a['SC-01'], check_date: day(-60), check_type: 'verification', performed_by: lab, standard_ids: [a['CAL-02']],
      next_check: day(200), points: [point('100 kg', 'kg', 99.9, 100.1, 100.08, 0.05)] },
    { asset_id: a['CAL-02'], check_date: day(-2), performed_by: lab, data: { note: 'Drifted after a fall; sent for repair' },
      points: [point('10 bar', 'bar', 9.9, 10.1, 10.4, 0.02)] },
  ];
  // One at a time, in date order: each check sees the history before it.
  for (const c of checks.sort((x, y) => (x.check_date < y.check_date ? -1 : 1))) {
    await createRecords(ctx, assetchecks, [parseJson(JSON.stringify(c)) as JsonObject]);
  }
}
