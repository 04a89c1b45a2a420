// New assets for the benchmark's writes — W7's PUTs, the bare INSERT beside them and
// the CSV import — made like the seed's rows (seed.ts) in the certificate's company:
// a unique asset_no from a prefix, serial number, description, status, next_check,
// period, a location and a department of that company, and `data`. Deterministic: a
// batch number gives the same rows in every process that makes them. Their next_check
// lies beyond the reminder window, so they change neither W2's counts nor the work of
// a reminder run.
import { addDays } from '../src/model/dates.ts';
import type { AssetRow } from './seed-insert.ts';

export const TYPES = ['Torque wrench', 'Multimeter', 'Pressure gauge', 'Scale'];
export const MAKERS = [['Norbar', 'TTi 100'], ['Fluke', '87V'], ['WIKA', 'CPG1500'], ['Mettler Toledo', 'ICS425'], ['Keysight', 'U1282A']];
export const PERIODS = [6, 12, 12, 12, 24, 36];

/** mulberry32: small, fast, deterministic. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Which assets to make: `count` of them per batch, asset_no `<prefix>-<batch>-<n>`. */
export interface NewAssetsSpec {
  readonly prefix: string;
  readonly count: number;
  readonly companyId: number;
  readonly locations: readonly number[];
  readonly departments: readonly number[];
  readonly today: string;
}

export interface NewAsset {
  readonly asset_no: string; readonly serial_no: string; readonly description: string; readonly status: string;
  readonly next_check: string; readonly period: number; readonly location_id: number; readonly department_id: number;
  readonly data: { readonly costcode: string; readonly manufacturer: string; readonly model: string; readonly room: string };
}

export function newAssets(spec: NewAssetsSpec, batch: number): NewAsset[] {
  const rnd = random(7919 * (batch + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const out: NewAsset[] = [];
  for (let n = 0; n < spec.count; n++) {
    const [manufacturer, model] = pick(MAKERS) as [string, string];
    out.push({
      asset_no: `${spec.prefix}-${batch}-${String(n).padStart(6, '0')}`, serial_no: `SN-${Math.floor(rnd() * 1e8)}`,
      description: `${pick(TYPES)} ${model}`, status: rnd() < 0.9 ? 'Active' : 'Out for repair',
      next_check: addDays(spec.today, 31 + Math.floor(rnd() * 700)), period: pick(PERIODS),
      location_id: pick(spec.locations), department_id: pick(spec.departments),
      data: { costcode: `P-${10 + Math.floor(rnd() * 40)}`, manufacturer, model, room: `B${1 + Math.floor(rnd() * 4)}-${100 + Math.floor(rnd() * 60)}` },
    });
  }
  return out;
}

/** The body of a JSON PUT of these assets. */
export const assetsJson = (assets: readonly NewAsset[]): string => JSON.stringify(assets);

const CSV_HEADER = 'asset_no,serial_no,description,status,next_check,period,location_id,department_id,data.costcode,data.manufacturer,data.model,data.room';

/** The body of a CSV import of these assets (no cell needs quoting). */
export function assetsCsv(assets: readonly NewAsset[]): string {
  const lines = [CSV_HEADER];
  for (const a of assets) {
    lines.push(`${a.asset_no},${a.serial_no},${a.description},${a.status},${a.next_check},${a.period},${a.location_id},${a.department_id},`
      + `${a.data.costcode},${a.data.manufacturer},${a.data.model},${a.data.room}`);
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** These assets as the rows the service stores for them (no last_check nor external type; added today). */
export const assetRows = (spec: NewAssetsSpec, assets: readonly NewAsset[], modified: string): AssetRow[] => assets.map((a) => ({
  company_id: spec.companyId, asset_no: a.asset_no, serial_no: a.serial_no, description: a.description, status: a.status,
  next_check: a.next_check, last_check: null, period: a.period, location_id: a.location_id, department_id: a.department_id,
  external_type_id: null, date_added: spec.today, data: JSON.stringify(a.data), modified,
}));
