// Which format a list answers in, from the request's Accept header (RFC 9110 §12.5.1).
// JSON takes the q-value of the most specific range that matches it
// (`application/json` before `application/*` before `*/*`); CSV and PDF are answered
// only when named (`text/csv`, `application/pdf`), so that a browser's `*/*` or a
// client's `text/*` gets JSON as from every v3.0 server. The highest q wins; on a tie
// a range naming the type beats a wildcard, then a file format beats JSON (a client
// that names CSV or PDF beside JSON asks for the file), then the one named first.
// A header that matches nothing offered and names none of the API's formats
// (`text/html`, `image/*`) gets JSON, as v3.0 answered it; one that asks only for
// formats this endpoint does not make (a PDF of users), or refuses JSON and makes no
// other offer acceptable, gets 406.
import { notAcceptable } from '../errors.ts';

export type ListFormat = 'json' | 'csv' | 'pdf';

export const MEDIA_TYPES: Readonly<Record<ListFormat, string>> = { json: 'application/json', csv: 'text/csv', pdf: 'application/pdf' };

interface Range { readonly type: string; readonly subtype: string; readonly q: number; readonly at: number }

/** The media ranges of an Accept header; a range whose q is not a number from 0 to 1 is left out. */
function rangesOf(accept: string): Range[] {
  return accept.split(',').flatMap((part, at): Range[] => {
    const [media = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const [type, subtype, extra] = media.split('/');
    if (!type || !subtype || extra !== undefined) return [];
    const qs = params.filter((p) => p.startsWith('q=')).map((p) => p.slice(2));
    const q = qs.length === 0 ? 1 : /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(qs[0]!) ? Number(qs[0]) : NaN;
    return Number.isNaN(q) ? [] : [{ type, subtype, q, at }];
  });
}

interface Match { readonly format: ListFormat; readonly q: number; readonly specific: number; readonly at: number }

/** How a format fares against the ranges: the most specific range that matches it, or none. */
function matchOf(format: ListFormat, ranges: readonly Range[]): Match | null {
  const [type, subtype] = MEDIA_TYPES[format].split('/') as [string, string];
  let best: Match | null = null;
  for (const r of ranges) {
    const named = r.type === type && r.subtype === subtype;
    const specific = named ? 2 : format !== 'json' ? -1 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1;
    if (specific >= 0 && (!best || specific > best.specific)) best = { format, q: r.q, specific, at: r.at };
  }
  return best;
}

const better = (a: Match, b: Match) => a.q !== b.q ? a.q > b.q
  : a.specific !== b.specific ? a.specific > b.specific
    : (a.format === 'json') !== (b.format === 'json') ? b.format === 'json' : a.at < b.at;

/** The format a GET of a list answers in; `offered` lists the endpoint's, JSON first. Throws 406 as said above. */
export function listFormat(accept: string | undefined, offered: readonly ListFormat[]): ListFormat {
  if (accept === undefined || accept.trim() === '') return 'json';
  const ranges = rangesOf(accept);
  let chosen: Match | null = null;
  for (const format of offered) {
    const m = matchOf(format, ranges);
    if (m && m.q > 0 && (!chosen || better(m, chosen))) chosen = m;
  }
  if (chosen) return chosen.format;
  const namesOurs = ranges.some((r) => Object.values(MEDIA_TYPES).includes(`${r.type}/${r.subtype}`)) || matchOf('json', ranges)?.q === 0;
  if (namesOurs) throw notAcceptable(accept, offered.map((f) => MEDIA_TYPES[f]));
  return 'json';
}
