// From the raw filter segments and order header of a request to a typed query.
import { type Condition, typeCondition } from '../filter/compile.ts';
import { parseOrder } from '../filter/order.ts';
import { parseSegment } from '../filter/parse.ts';
import { resolveField } from '../filter/resolve.ts';
import { invalidFilter } from '../errors.ts';
import type { Lookup, ResourceDef, Verb } from '../model/types.ts';
import type { Limits, Query } from './types.ts';

/** Decimal digits, leading zeros allowed as in integer filters (`id=01`); the value must be at least 1. */
const PAGE = /^\d+$/;

export function parseQuery(def: ResourceDef, verb: Verb, segments: readonly string[], orderHeader: string | undefined,
  lookup: Lookup, limits: Limits): Query {
  if (verb === 'PUT' && segments.length > 0) throw invalidFilter(segments[0]!);
  const conditions: Condition[] = [];
  let page: number | null = null;
  for (const raw of segments) {
    const segment = parseSegment(raw);
    if (segment.field === 'page') {
      // Paging is for GET only, once, `=` a positive integer (spec §4.1).
      if (verb !== 'GET' || page !== null || segment.op !== '=' || segment.value === null || !PAGE.test(segment.value)
        || !Number.isSafeInteger(Number(segment.value)) || Number(segment.value) < 1) throw invalidFilter(raw);
      page = Number(segment.value);
      continue;
    }
    // `page` never counts towards the limit of filter segments (spec §4.1, §10).
    if (conditions.length === limits.maxFilters) throw invalidFilter(raw);
    const ref = resolveField(def, segment.field, lookup);
    if (!ref) throw invalidFilter(raw);
    conditions.push(typeCondition(segment, ref));
  }
  const order = verb === 'GET' ? parseOrder(def, orderHeader, lookup) : [];
  return { conditions, order, page: page ?? 1 };
}
