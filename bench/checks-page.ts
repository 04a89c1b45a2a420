// What W9's answers must be: the first page of an asset's checks, each record shaped
// as the service writes it — its members in order, its asset, its certificate file and
// its standards embedded (each the asset its standard_ids names, in that order), and
// its points as stored (verdicts added).
import { isObject, type Json, keysOf, paginationProblem } from './checks.ts';

export interface CheckPage {
  readonly kind: 'assetchecks';
  readonly totalRecords: number;
  readonly pageSize: number;
  /** The asset every check is of. */
  readonly assetId: number;
  /** Points per check, and standards. */
  readonly points: number;
  readonly standards: number;
}

const CHECK_KEYS = 'id,company_id,asset_id,check_type,check_date,performed_by,certificate_no,result,points,standard_ids,file_id,next_check,'
  + 'data,created,modified,asset,file,standards,version';
const ASSET_SHORT_KEYS = 'id,asset_no,serial_no,status,next_check,period,company_id,location_id,department_id,description,data';
const FILE_KEYS = 'id,upload_uuid,upload_endpoint,filedate,description,filename,asset_id,company_id,data,mimetype,size,modified,version';
const POINT_KEYS = 'name,unit,nominal,lower_limit,upper_limit,as_found,as_left,uncertainty,found_verdict,left_verdict,verdict';

function checkProblem(c: Json, check: CheckPage): string | null {
  if (keysOf(c) !== CHECK_KEYS) return `check members ${keysOf(c)}`;
  if (c.asset_id !== check.assetId) return `asset_id ${String(c.asset_id)} != ${check.assetId}`;
  if (keysOf(c.asset) !== ASSET_SHORT_KEYS || (c.asset as Json).id !== c.asset_id) return 'asset embed';
  if (c.file_id === null ? c.file !== null : keysOf(c.file) !== FILE_KEYS || (c.file as Json).id !== c.file_id) return 'file embed';
  const ids = c.standard_ids;
  const standards = c.standards;
  if (!Array.isArray(ids) || ids.length !== check.standards || !Array.isArray(standards) || standards.length !== ids.length) return 'standards';
  for (const [i, s] of (standards as unknown[]).entries()) {
    if (keysOf(s) !== ASSET_SHORT_KEYS || (s as Json).id !== ids[i]) return `standard ${i}`;
  }
  const points = c.points;
  if (!Array.isArray(points) || points.length !== check.points) return `${Array.isArray(points) ? points.length : 'no'} points`;
  if ((points as unknown[]).some((p) => keysOf(p) !== POINT_KEYS)) return 'point members';
  if (typeof c.result !== 'string' || typeof c.version !== 'number') return 'result or version';
  return null;
}

/** Why a page of checks is not the expected one, or null (its envelope and request block checked by the caller). */
export function checkPageProblem(body: Json, check: CheckPage): string | null {
  const pagination = paginationProblem(body, check.totalRecords, check.pageSize, 1);
  if (pagination) return pagination;
  for (const c of body.response as unknown[]) {
    const problem = isObject(c) ? checkProblem(c, check) : 'record';
    if (problem) return problem;
  }
  return null;
}
