// The asset list's query string → the engine's filters and ordering. Every value
// stays a filter value (escaped in engine.ts); field names come from fixed tables.
import type { DueWindow } from '../due.ts';
import { field, wholeNumber } from './deps.ts';

/** The search text matches a record when any of these contains it (case aside). */
export const SEARCH_FIELDS = ['asset_no', 'serial_no', 'description'] as const;
export const SORTS = [['asset_no', 'Asset number'], ['next_check', 'Next check'], ['description', 'Description']] as const;
export const RESULTS = ['pass', 'adjusted', 'conditional', 'fail'] as const;
const KEYS = ['q', 'location', 'department', 'status', 'due_before', 'last_result', 'state', 'sort', 'dir'] as const;

export type AssetQuery = Readonly<Record<(typeof KEYS)[number], string>> & { readonly page: number };

export function readAssetQuery(query: unknown): AssetQuery {
  const q = Object.fromEntries(KEYS.map((k) => [k, field(query, k).trim()])) as Record<(typeof KEYS)[number], string>;
  if (!SORTS.some(([f]) => f === q.sort)) q.sort = 'asset_no';
  if (q.dir !== 'desc') q.dir = 'asc';
  return { ...q, page: wholeNumber(field(query, 'page')) ?? 1 };
}

/** The search as a group of filters of which any one must hold. */
export const assetSearch = (q: AssetQuery): (readonly [string, string])[][] =>
  (q.q ? [SEARCH_FIELDS.map((f) => [`${f}~`, q.q] as const)] : []);

export function assetFilters(q: AssetQuery, w: DueWindow): (readonly [string, string] | string)[] {
  const f: (readonly [string, string] | string)[] = [];
  if (q.location) f.push(['location.description~', q.location]);
  if (q.department) f.push(['department.description~', q.department]);
  if (q.status) f.push(['status~', q.status]);
  if (q.due_before) f.push(['next_check<', q.due_before]);
  if (q.last_result === 'none') f.push('last_result=%3CNULL%3E');
  else if (q.last_result) f.push(['last_result=', q.last_result]);
  if (q.state === 'overdue') f.push(['next_check<', w.today]);
  if (q.state === 'due') f.push(['next_check+', w.today], ['next_check-', w.soon]);
  return f;
}

export const assetOrder = (q: AssetQuery) => `${q.sort}${q.dir === 'desc' ? '^' : ''}`;

/** The query string of this selection, with some parameters replaced (links to pages, sorts, the CSV). */
export function assetLink(path: string, q: AssetQuery, changes: Readonly<Record<string, string | number>> = {}): string {
  const params = new URLSearchParams();
  for (const k of KEYS) if (q[k] && !(k in changes)) params.set(k, q[k]);
  for (const [k, v] of Object.entries(changes)) if (v !== '' && !(k === 'page' && v === 1)) params.set(k, String(v));
  if (!('page' in changes) && q.page > 1 && path === '/assets') params.set('page', String(q.page));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
