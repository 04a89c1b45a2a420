// The checks of W8 and W9 (calibration records, src/resources/assetchecks.ts): 20
// measurement points of a torque wrench, as a body sends them and as the service
// stores them (its own check-points.ts reads and writes them, so the seeded rows hold
// the very text a PUT would store), and W8's request bodies.
import { pointsJson, readPoints, resultOf } from '../src/resources/check-points.ts';

export const POINTS_PER_CHECK = 20;
export const STANDARDS_PER_CHECK = 2;

/** Two decimals, as a JSON number writes them. */
const round = (v: number) => Number(v.toFixed(2));

/**
 * Points at 5, 10, … 100 Nm with ±4 % limits and an uncertainty of 0.5 %; all read
 * in tolerance, or (`adjusted`) the first found out of tolerance and adjusted.
 */
export function benchPoints(adjusted = false): Record<string, string | number>[] {
  const out: Record<string, string | number>[] = [];
  for (let i = 0; i < POINTS_PER_CHECK; i++) {
    const nominal = 5 * (i + 1);
    const point: Record<string, string | number> = {
      name: `${nominal} Nm`, unit: 'Nm', nominal, lower_limit: round(nominal * 0.96), upper_limit: round(nominal * 1.04),
      as_found: round(nominal * (1 + 0.005 * ((i % 5) - 2))), uncertainty: round(nominal * 0.005),
    };
    if (adjusted && i === 0) Object.assign(point, { as_found: round(nominal * 1.08), as_left: nominal });
    out.push(point);
  }
  return out;
}

/** The points as the service stores them (verdicts added, numbers as written) and the result they give. */
export function storedPoints(adjusted = false): { readonly json: string; readonly result: string } {
  const points = readPoints(JSON.stringify(benchPoints(adjusted)));
  return { json: pointsJson(points), result: resultOf(points)! };
}

/** What W8 records: the checked asset, its standards (in calibration today), the day. */
export interface CheckBodySpec { readonly assetId: number; readonly standards: readonly number[]; readonly today: string }

/**
 * W8's two bodies, sent in turn: a check dated today with 20 points and 2 standards,
 * passed or adjusted, with a next check of its own, so that every check really
 * changes its asset (last_result, next_check) as W6's bodies change theirs.
 */
export function checkBodies(spec: CheckBodySpec, nextChecks: readonly [string, string]): string[] {
  return [false, true].map((adjusted, i) => JSON.stringify({
    asset_id: spec.assetId, check_date: spec.today, performed_by: 'Bench Lab', certificate_no: `BENCH-${i + 1}`,
    standard_ids: spec.standards, next_check: nextChecks[i], points: benchPoints(adjusted),
  }));
}
