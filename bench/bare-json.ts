// The bare servers' responses, written by hand: the service's envelope and (bare W2)
// its asset records (own fields, embeds, files, version) in the service's member order,
// one JSON.stringify per value and stored JSON text inserted as it is.
import type { BareRow } from './bare-driver.ts';
import { ASSET_COLUMNS, EMBEDS, FILE_COLUMNS, JSON_COLUMNS } from './bare-sql.ts';

export interface Member { readonly key: string; readonly json: boolean }
/** An object's members: the `json` columns hold stored JSON text. */
export const members = (columns: readonly string[], json: ReadonlySet<string> = JSON_COLUMNS): Member[] =>
  columns.map((c) => ({ key: `${JSON.stringify(c)}:`, json: json.has(c) }));
const valueJson = (v: BareRow[number] | undefined, json: boolean) => (v === null || v === undefined ? 'null' : json ? String(v) : JSON.stringify(v));

/** The object of `list`'s members from row[start…]. */
export function objectJson(row: BareRow, start: number, list: readonly Member[]): string {
  let out = '';
  for (let i = 0; i < list.length; i++) out += `${i === 0 ? '' : ','}${list[i]!.key}${valueJson(row[start + i], list[i]!.json)}`;
  return `{${out}}`;
}

const OWN = members(ASSET_COLUMNS);
const EMBED_PARTS = (() => {
  let start = ASSET_COLUMNS.length;
  return EMBEDS.map((e) => {
    const list = members(e.columns);
    const part = {
      key: `${JSON.stringify(e.name)}:`, start, list, via: ASSET_COLUMNS.indexOf(e.via),
      none: e.nullsWhenNone ? `{${list.map((m) => `${m.key}null`).join(',')}}` : 'null',
    };
    start += e.columns.length;
    return part;
  });
})();
const FILE = members(FILE_COLUMNS);
const ENDPOINT = FILE_COLUMNS.indexOf('upload_endpoint');
const FILE_ASSET = FILE_COLUMNS.indexOf('asset_id');

/** Asset id → its files as JSON text; `baseUrl` makes each upload_endpoint from the stored token. */
export function filesByAsset(rows: readonly BareRow[], baseUrl: string): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const r of rows) {
    const row = r.map((v, i) => (i === ENDPOINT ? `${baseUrl}/3.0/upload/${String(v)}` : v));
    const assetId = Number(r[FILE_ASSET]);
    const list = out.get(assetId) ?? [];
    list.push(objectJson(row, 0, FILE));
    out.set(assetId, list);
  }
  return out;
}

export function assetJson(row: BareRow, files: ReadonlyMap<number, readonly string[]>): string {
  let out = objectJson(row, 0, OWN).slice(0, -1);
  for (const e of EMBED_PARTS) out += `,${e.key}${row[e.via] === null ? e.none : objectJson(row, e.start, e.list)}`;
  return `${out},"files":[${(files.get(Number(row[0])) ?? []).join(',')}],"version":${String(row[row.length - 1])}}`;
}

export function listBody(url: string, endpoint: string, total: number, pageSize: number, records: readonly string[]): string {
  const request = `{"url":${JSON.stringify(url)},"endpoint":${JSON.stringify(endpoint)},"requested_version":"3.0","api_version":3,"request_method":"Get",`
    + `"timestamp":${Math.floor(Date.now() / 1000)},"session":null}`;
  return `{"request":${request},"pagination":{"total_pages":${Math.ceil(total / pageSize)},"total_records":${total}},"response":[${records.join(',')}]}`;
}
