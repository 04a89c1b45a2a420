// From the filter segments (path and query string) and order header of a request to a typed query.
import { type Condition, typeCondition } from '../filter/compile.ts';
import { parseOrder } from '../filter/order.ts';
import { decodeQueryValue, type FilterSegment, parseQuerySegment, parseSegment } from '../filter/parse.ts';
import { resolveField } from '../filter/resolve.ts';
import { invalidFilter } from '../errors.ts';
import type { Lookup, ResourceDef, Verb } from '../model/types.ts';
import type { Filters, Limits, Query } from './types.ts';

/** Decimal digits, leading zeros allowed as in integer filters (`id=01`); the value must be at least 1. */
const PAGE = /^\d+$/;

/** Filters given as path segments only (the service's own queries). */
export const pathFilters = (...segments: string[]): Filters => ({ segments, query: [] });

/** Path segments first, then the query string's, each parsed by its own decoding into the one grammar. */
function* segmentsOf(filters: Filters): Generator<FilterSegment> {
  for (const raw of filters.segments) yield parseSegment(raw);
  for (const sent of filters.query) yield parseQuerySegment(sent);
}

export function parseQuery(def: ResourceDef, verb: Verb, filters: Filters, orderHeader: string | undefined,
  lookup: Lookup, limits: Limits): Query {
  if (verb === 'PUT') {
    if (filters.segments.length > 0) throw invalidFilter(filters.segments[0]!);
    if (filters.query.length > 0) throw invalidFilter(decodeQueryValue(filters.query[0]!));
  }
  const conditions: Condition[] = [];
  let page: number | null = null;
  for (const segment of segmentsOf(filters)) {
    const { raw } = segment;
    if (segment.field === 'page') {
      // Paging is for GET only, once (in the path or the query, not both), `=` a positive integer.
      if (verb !== 'GET' || page !== null || segment.op !== '=' || segment.value === null || !PAGE.test(segment.value)
        || !Number.isSafeInteger(Number(segment.value)) || Number(segment.value) < 1) throw invalidFilter(raw);
      page = Number(segment.value);
      continue;
    }
    // `page` never counts towards the limit of filter segments, which path and query share.
    if (conditions.length === limits.maxFilters) throw invalidFilter(raw);
    const ref = resolveField(def, segment.field, lookup);
    if (!ref) throw invalidFilter(raw);
    conditions.push(typeCondition(segment, ref));
  }
  for (const group of filters.anyOf ?? []) {
    const [first, ...rest] = group.map((raw) => {
      const segment = parseSegment(raw);
      const ref = resolveField(def, segment.field, lookup);
      if (!ref || segment.field === 'page') throw invalidFilter(raw);
      return typeCondition(segment, ref);
    });
    if (!first) continue;
    if (conditions.length === limits.maxFilters) throw invalidFilter(group[0]!);
    conditions.push(rest.length > 0 ? { ...first, orElse: rest } : first);
  }
  const order = verb === 'GET' ? parseOrder(def, orderHeader, lookup) : [];
  return { conditions, order, page: page ?? 1 };
}
