// The check form's fields → a check body as JSON text. Numbers go into the text as
// typed (after a strict test), so the engine's exact decimal arithmetic sees what the
// person wrote; every other rule (limits, verdicts, dates, types) is the endpoint's.
import { field } from './deps.ts';

export const NUMBER_FIELDS = ['nominal', 'lower_limit', 'upper_limit', 'as_found', 'as_left', 'uncertainty'] as const;
export const CHECK_TYPES = ['calibration', 'verification', 'inspection', 'pat', 'loler', 'service'] as const;
const NUMBER = /^-?\d{1,30}(\.\d{1,30})?([eE][+-]?\d{1,3})?$/;
const MAX_ROWS = 500;
const MORE = 3;

export interface PointRow {
  readonly name: string;
  readonly unit: string;
  readonly numbers: Readonly<Record<(typeof NUMBER_FIELDS)[number], string>>;
}

export interface CheckForm {
  readonly check_date: string;
  readonly check_type: string;
  readonly performed_by: string;
  readonly certificate_no: string;
  readonly result: string;
  readonly rows: readonly PointRow[];
}

const filled = (r: PointRow) => r.name !== '' || r.unit !== '' || NUMBER_FIELDS.some((k) => r.numbers[k] !== '');

export function readCheckForm(body: unknown, today: string): CheckForm {
  const count = Math.min(MAX_ROWS, Math.max(1, Number(field(body, 'rows')) || MORE));
  const rows: PointRow[] = [];
  for (let i = 0; i < count; i++) {
    const numbers = Object.fromEntries(NUMBER_FIELDS.map((k) => [k, field(body, `${k}_${i}`).trim()])) as PointRow['numbers'];
    rows.push({ name: field(body, `name_${i}`).trim(), unit: field(body, `unit_${i}`).trim(), numbers });
  }
  return {
    check_date: field(body, 'check_date') || today, check_type: field(body, 'check_type') || 'calibration',
    performed_by: field(body, 'performed_by'), certificate_no: field(body, 'certificate_no'), result: field(body, 'result'), rows,
  };
}

/** The rows to show again: the filled ones, and a few empty ones to add more. */
export const rowsToShow = (f: CheckForm): PointRow[] => [...f.rows.filter(filled), ...Array.from({ length: MORE }, () => ({
  name: '', unit: '', numbers: Object.fromEntries(NUMBER_FIELDS.map((k) => [k, ''])) as PointRow['numbers'],
}))].slice(0, MAX_ROWS);

/** The `points` array's JSON text; a number that is not one becomes a string, which the endpoint refuses for `points`. */
export function pointsText(f: CheckForm): string {
  return `[${f.rows.filter(filled).map((r) => `{"name":${JSON.stringify(r.name)},"unit":${JSON.stringify(r.unit)},${NUMBER_FIELDS.map((k) => {
    const v = r.numbers[k];
    return `${JSON.stringify(k)}:${v === '' ? 'null' : NUMBER.test(v) ? v : JSON.stringify(v)}`;
  }).join(',')}}`).join(',')}]`;
}

/** The body of the assetchecks PUT. */
export function checkBody(f: CheckForm, assetId: number): string {
  const points = pointsText(f);
  const result = points === '[]' && f.result ? `,"result":${JSON.stringify(f.result)}` : '';
  return `{"asset_id":${assetId},"check_date":${JSON.stringify(f.check_date)},"check_type":${JSON.stringify(f.check_type)},`
    + `"performed_by":${JSON.stringify(f.performed_by)},"certificate_no":${JSON.stringify(f.certificate_no)},"points":${points}${result}}`;
}
