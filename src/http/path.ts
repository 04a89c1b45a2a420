// `/{version}/{endpoint}[/{filter}...]` from the raw request target (spec §1).
// Segments stay raw: filters are decoded by the filter parser, one segment at a time.

export interface ApiPath {
  /** The path exactly as received, without the query string. */
  readonly raw: string;
  readonly version: string;
  readonly endpoint: string;
  readonly segments: readonly string[];
}

export function splitPath(url: string): ApiPath {
  const q = url.indexOf('?');
  const raw = q < 0 ? url : url.slice(0, q);
  const [version = '', endpoint = '', ...segments] = raw.split('/').filter((s) => s !== '');
  return { raw, version, endpoint, segments };
}
