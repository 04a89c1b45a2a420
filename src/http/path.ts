// `/{version}/{endpoint}[/{filter}...]` from the raw request target, and the
// filters of its query string. Segments and query values stay as sent:
// the filter parser decodes each one its own way.

export interface ApiPath {
  /** The path exactly as received, without the query string. */
  readonly raw: string;
  readonly version: string;
  readonly endpoint: string;
  readonly segments: readonly string[];
  /** The query's `filter` values as sent, and `page=<value>` for each `page`, in their order; other parameters are ignored. */
  readonly query: readonly string[];
  /** The query's `filter` and `page` parameters as `filter=…&page=…`, their values as sent: what of the query is part of the request. */
  readonly counted: string;
}

/** A parameter's name by the query string's rules; a name that does not decode is no name this API reads. */
function nameOf(sent: string): string | null {
  try {
    return decodeURIComponent(sent.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/** The values that count, and the parameters they came in as `filter=…&page=…` (as sent, others left out). */
function queryFilters(search: string): { query: string[]; counted: string } {
  const query: string[] = [];
  const counted: string[] = [];
  for (const pair of search.split('&')) {
    const eq = pair.indexOf('=');
    const name = nameOf(eq < 0 ? pair : pair.slice(0, eq));
    if (name !== 'filter' && name !== 'page') continue;
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    query.push(name === 'page' ? `page=${value}` : value);
    counted.push(`${name}=${value}`);
  }
  return { query, counted: counted.join('&') };
}

export function splitPath(url: string): ApiPath {
  const q = url.indexOf('?');
  const raw = q < 0 ? url : url.slice(0, q);
  const [version = '', endpoint = '', ...segments] = raw.split('/').filter((s) => s !== '');
  return { raw, version, endpoint, segments, ...(q < 0 ? { query: [], counted: '' } : queryFilters(url.slice(q + 1))) };
}
