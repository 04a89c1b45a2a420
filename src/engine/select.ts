// SQL pieces shared by every statement over a resource: column expressions,
// scope-confined joins, the WHERE clause and ORDER BY. They take a Shape, never
// a request: values enter only as Params.
import { sql } from 'kysely';
import type { Sql } from '../model/dialect.ts';
import { type Condition, compileCondition } from '../filter/compile.ts';
import { type OrderTerm, orderSql } from '../filter/order.ts';
import type { FieldRef } from '../filter/resolve.ts';
import type { FieldDef, RelationDef, ResourceDef } from '../model/types.ts';
import { computedContext } from './context.ts';
import { inScope } from './scope.ts';
import type { Shape } from './types.ts';

export const aliasOf = (rel: RelationDef | null) => (rel ? `r_${rel.name}` : 't');

export const columnOf = (field: FieldDef) => field.column ?? field.name;

export function columnExpr(s: Shape, field: FieldDef, alias: string): Sql {
  return field.computed ? field.computed(computedContext(s, alias)) : sql.ref(`${alias}.${columnOf(field)}`);
}

export const exprOf = (s: Shape, ref: FieldRef): Sql => columnExpr(s, ref.field, aliasOf(ref.relation));

/**
 * Conditions that confine `alias` of `def` to what the caller may see. The main
 * table of a statement (`t`) lists the scope; joined and single records probe it.
 */
export function visibility(s: Shape, def: ResourceDef, alias: string, form: 'list' | 'probe' = alias === 't' ? 'list' : 'probe'): Sql[] {
  const within = inScope(s.hooks, sql.ref(`${alias}.${def.scopeColumn}`), form);
  const extra = def.visible?.(computedContext(s, alias));
  return extra ? [within, extra] : [within];
}

/** `visibility` as one condition. */
export const visible = (s: Shape, def: ResourceDef, alias: string, form?: 'list' | 'probe'): Sql =>
  sql.join(visibility(s, def, alias, form), sql` AND `);

/**
 * LEFT JOINs for one-to-one relations. A related record outside the caller's
 * scope joins as all-NULL: it is shown with null members and filters see NULL.
 */
export function joinClause(s: Shape, def: ResourceDef, relations: Iterable<RelationDef>): Sql {
  const wanted = new Set(relations);
  const parts = def.relations.filter((r) => wanted.has(r) && r.via).map((rel) => {
    const target = s.catalog.lookup(rel.resource);
    const a = aliasOf(rel);
    const on = [sql`${sql.ref(`${a}.id`)} = ${sql.ref(`t.${rel.via}`)}`, ...visibility(s, target, a)];
    return sql`LEFT JOIN ${sql.table(target.table)} AS ${sql.id(a)} ON ${sql.join(on, sql` AND `)}`;
  });
  return sql.join(parts, sql` `);
}

export function relationsOf(conditions: readonly Condition[], order: readonly OrderTerm[] = []): Set<RelationDef> {
  const out = new Set<RelationDef>();
  for (const { ref } of [...conditions, ...conditions.flatMap((c) => c.orElse ?? []), ...order]) if (ref.relation) out.add(ref.relation);
  return out;
}

/**
 * The filter's conditions, then the scope: SQLite tests a walked row's terms in
 * their order, and a date compared costs less than a look-up in the scope's set
 * (page 101 of W2: 663 against 543 µs).
 */
export function whereClause(s: Shape, def: ResourceDef, conditions: readonly Condition[], form?: 'list' | 'probe'): Sql {
  const parts = [...conditions.map((c) => conditionSql(s, c)), ...visibility(s, def, 't', form)];
  return sql.join(parts, sql` AND `);
}

/** One condition; over a relation through a link table, it holds when some linked record the caller may see matches. */
function conditionSql(s: Shape, c: Condition): Sql {
  if (c.orElse) return sql`(${sql.join([c, ...c.orElse].map((one) => oneConditionSql(s, one)), sql` OR `)})`;
  return oneConditionSql(s, c);
}

function oneConditionSql(s: Shape, c: Condition): Sql {
  const own = compileCondition(c, exprOf(s, c.ref), s.hooks);
  const through = c.ref.relation?.through;
  if (!through) return own;
  const a = aliasOf(c.ref.relation);
  return sql`EXISTS (SELECT 1 FROM ${sql.table(through.table)} AS l JOIN ${sql.table(c.ref.resource.table)} AS ${sql.id(a)}
    ON ${sql.ref(`${a}.id`)} = ${sql.ref(`l.${through.to}`)} WHERE ${sql.ref(`l.${through.from}`)} = t.id
    AND ${visible(s, c.ref.resource, a)} AND ${own})`;
}

/** ORDER BY with `id` as the final tie-breaker, so pages never overlap or skip. */
export function orderClause(s: Shape, order: readonly OrderTerm[]): Sql {
  const items = order.flatMap((term) => orderSql(term, exprOf(s, term.ref), s.hooks));
  const byOwnId = order.some((t) => !t.ref.relation && t.ref.field.name === 'id' && t.ref.keys.length === 0);
  if (!byOwnId) items.push(sql`t.id ASC`);
  return sql.join(items, sql`, `);
}
