// `X-API-Result-Order: a,b^,c`.
import { sql } from 'kysely';
import type { Sql, SqlDialect } from '../model/dialect.ts';
import { malformedOrder } from '../errors.ts';
import type { Lookup, ResourceDef } from '../model/types.ts';
import { type FieldRef, resolveOrderField } from './resolve.ts';

export interface OrderTerm { readonly ref: FieldRef; readonly descending: boolean }

/** Distinct fields a header may order on; more would make SQLite refuse the statement. */
export const MAX_ORDER_TERMS = 32;

/**
 * The header's terms: a field named again (as itself or by another spelling of the
 * same field) counts once, and only its first occurrence orders.
 */
export function parseOrder(def: ResourceDef, header: string | undefined, lookup: Lookup): OrderTerm[] {
  if (header === undefined || header.trim() === '') return [];
  const terms = new Map<string, OrderTerm>();
  for (const part of header.split(',')) {
    const item = part.trim();
    const descending = item.endsWith('^');
    const ref = resolveOrderField(def, descending ? item.slice(0, -1) : item, lookup);
    if (!ref) throw malformedOrder(header);
    const key = JSON.stringify([ref.relation?.name ?? null, ref.field.name, ref.keys]);
    if (terms.has(key)) continue;
    if (terms.size === MAX_ORDER_TERMS) throw malformedOrder(header);
    terms.set(key, { ref, descending });
  }
  return [...terms.values()];
}

/**
 * ORDER BY items for one term. NULL sorts lowest on both engines; JSON values
 * sort null < number < string < boolean < object/array.
 */
export function orderSql(term: OrderTerm, expr: Sql, hooks: SqlDialect): Sql[] {
  const dir = term.descending ? sql`DESC NULLS LAST` : sql`ASC NULLS FIRST`;
  if (term.ref.keys.length === 0 && term.ref.field.type !== 'json') {
    const plain = term.ref.field.type === 'int' || term.ref.field.type === 'bool' ? expr : hooks.bytewise(expr);
    return [sql`${plain} ${dir}`];
  }
  const j = hooks.json(expr, term.ref.keys);
  const rank = sql`(CASE ${j.kind} WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'boolean' THEN 3 WHEN 'container' THEN 4 END)`;
  return [sql`${rank} ${dir}`, sql`${j.number} ${dir}`, sql`${j.text} ${dir}`];
}
