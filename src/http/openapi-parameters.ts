// The parameters of the OpenAPI document: the filter segments of a path, with
// the names each endpoint's filters may use, the same filters in the query
// string, and the ordering header.
import type { Lookup, ResourceDef } from '../model/types.ts';
import { filterableFields, type Schema } from './openapi-schemas.ts';
import type { Limits } from '../engine/types.ts';

/** The `{filters}` path parameter, with the names the endpoint's filters may use. */
export function filtersParameter(ctx: { readonly limits: Limits; readonly lookup: Lookup }, def: ResourceDef, uses: string): Schema {
  const { maxFilters, pageSize } = ctx.limits;
  return {
    name: 'filters', in: 'path', required: true,
    description: [
      `One or more filter segments separated by \`/\`: this parameter spans several path segments, so the \`/\` between them is sent as it is. ${uses}`,
      'Each segment is `<field><operator><value>`, and every segment must hold (AND). Operators: `=` equal, `!` not equal (also matches NULL '
        + 'and missing JSON keys), `>` greater, `<` less, `+` greater or equal, `-` less or equal, `~` contains (case-insensitive; `%`, `_` and `\\` are literal). '
        + 'Two-character aliases: `!=`, `+=` and `>=`, `-=` and `<=` (the `=` must be sent raw).',
      'The field is a name of `x-filterable-fields` (an own field, the same as `<endpoint>.field`, or `relation.field` of an embedded record), '
        + 'or a path inside a `json` field (`data.k1.k2`, `company.data.region`). The value is percent-decoded; a raw `+` is a space and `%2B` a plus. '
        + '`<NULL>` (or `%3CNULL%3E`) is SQL NULL, with `=` (is null) and `!` (is not null) only. Integer fields take integers, date fields '
        + '`YYYY-MM-DD`, datetime fields a date (compared with the date part) or `YYYY-MM-DD+HH:MM:SS`; `~` takes any text.',
      `\`page=N\` (GET only, once, N ≥ 1) selects a page of ${pageSize} records and is not a filter. At most ${maxFilters} filter segments. `
        + 'A segment that does not parse, names an unknown field or has a value of the wrong type is refused with 400 `invalid_filter`.',
    ].join('\n\n'),
    schema: { type: 'string', minLength: 1 },
    example: 'id>10/page=2',
    'x-filterable-fields': filterableFields(def, ctx.lookup),
  };
}

/**
 * `?filter=<segment>`, repeated: the form a generated client can send, as its path parameters are percent-encoded whole
 * (a `/` between two segments would arrive as `%2F`, one segment that matches nothing).
 */
export function filterQueryParameter(limits: Limits): Schema {
  return {
    name: 'filter', in: 'query', required: false, style: 'form', explode: true,
    description: 'Filters in the query string, one `<field><operator><value>` segment per `filter` parameter, with the grammar and field '
      + 'names of the path\'s filter segments. Each value is decoded once by the query string\'s rules (`+` and `%20` are spaces, `%2B` a '
      + 'plus) and then read as it is: a client that encodes its parameters sends `next_check+2026-01-01` ("next_check ≥ 2026-01-01") as '
      + '`filter=next_check%2B2026-01-01`. `>=`, `<=`, `!=`, `+=` and `-=` are operators, and `<NULL>` is SQL NULL. These filters apply '
      + `together with any in the path, and count towards the same limit of ${limits.maxFilters}. A value that does not decode, or an empty `
      + 'one, is refused with 400 `invalid_filter`; so is `page=N` on POST or DELETE. Other query parameters are ignored.',
    schema: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: limits.maxFilters },
    example: ['status=Active', 'next_check+2026-01-01'],
  };
}

/** `?page=N` on lists: the page of the path form's `page=N` segment; given twice, or in both, is refused. */
export function pageQueryParameter(limits: Limits): Schema {
  return {
    name: 'page', in: 'query', required: false,
    description: `The page of ${limits.pageSize} records to answer (1 unless given), as a \`page=N\` path segment would; not a filter. `
      + 'Once only: a second `page` (in the query, as a `filter`, or in the path) is refused with 400 `invalid_filter`.',
    schema: { type: 'integer', minimum: 1 },
    example: 2,
  };
}

export const RESULT_ORDER: Schema = {
  name: 'X-API-Result-Order', in: 'header', required: false,
  description: 'Comma-separated fields to order by, each ascending unless suffixed `^` (descending): own fields, `relation.field` '
    + 'and JSON paths (`data.costcode`). `id` ascending is always the final tie-breaker. Anything else is refused with 400 `malformed_order`.',
  schema: { type: 'string' },
  example: 'next_check^,asset_no',
};

/** Conditional GET. */
export const IF_NONE_MATCH: Schema = {
  name: 'If-None-Match', in: 'header', required: false,
  description: 'The `ETag` of an earlier answer (or `*`): when the answer would be the same, 304 with no body.',
  schema: { type: 'string' },
  example: 'W/"3q2-7w"',
};

/** Safe retries, on every write but an upload (which is idempotent by itself). */
export const IDEMPOTENCY_KEY: Schema = {
  name: 'Idempotency-Key', in: 'header', required: false,
  description: 'A key of 1–255 printable ASCII characters chosen by the client. The same request sent again with it within 24 hours '
    + 'gets the first reply again, byte for byte, with `Idempotent-Replayed: true`, and writes nothing; the key on another request is '
    + '422 `idempotency_mismatch`, and while the first still runs, 409 `idempotency_in_flight`. Refusals are not kept. Keys belong to '
    + 'the certificate (and the session\'s user).',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
  example: '7c1d6a4e-order-1042',
};

/** Conditional writes, on POST and DELETE of resource endpoints. */
export const IF_MATCH: Schema = {
  name: 'If-Match', in: 'header', required: false,
  description: 'Apply only to records as the client saw them: a version (`3`: every matched record has it, and at least one matches), '
    + 'an `ETag` of the GET of the same filters in the default order (the records matched now are exactly those it showed, at those '
    + 'versions; all of them on its one page), or `*` (some record matches). Otherwise 412 `precondition_failed`, nothing written.',
  schema: { type: 'string' },
  example: '3',
};
