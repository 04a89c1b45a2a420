// SQL pieces shared by every statement over a resource: column expressions,
// scope-confined joins, the WHERE clause and ORDER BY.
import { sql } from 'kysely';
import type { Sql } from '../db/dialect.ts';
import { type Condition, compileCondition } from '../filter/compile.ts';
import { type OrderTerm, orderSql } from '../filter/order.ts';
import type { FieldRef } from '../filter/resolve.ts';
import type { FieldDef, RelationDef, ResourceDef } from '../model/types.ts';
import { computedContext, type Ctx, scopeOf } from './context.ts';

export const aliasOf = (rel: RelationDef | null) => (rel ? `r_${rel.name}` : 't');

export function columnExpr(ctx: Ctx, field: FieldDef, alias: string): Sql {
  return field.computed ? field.computed(computedContext(ctx, alias)) : sql.ref(`${alias}.${field.column ?? field.name}`);
}

export const exprOf = (ctx: Ctx, ref: FieldRef): Sql => columnExpr(ctx, ref.field, aliasOf(ref.relation));

/** Conditions that confine `alias` of `def` to what the caller may see. */
export function visibility(ctx: Ctx, def: ResourceDef, alias: string): Sql[] {
  const inScope = scopeOf(ctx).contains(sql.ref(`${alias}.${def.scopeColumn}`));
  const extra = def.visible?.(computedContext(ctx, alias));
  return extra ? [inScope, extra] : [inScope];
}

/** `visibility` as one condition. */
export const visible = (ctx: Ctx, def: ResourceDef, alias: string): Sql => sql.join(visibility(ctx, def, alias), sql` AND `);

/**
 * LEFT JOINs for one-to-one relations. A related record outside the caller's
 * scope joins as all-NULL: it is shown with null members and filters see NULL.
 */
export function joinClause(ctx: Ctx, def: ResourceDef, relations: Iterable<RelationDef>): Sql {
  const wanted = new Set(relations);
  const parts = def.relations.filter((r) => wanted.has(r) && r.via).map((rel) => {
    const target = ctx.catalog.lookup(rel.resource);
    const a = aliasOf(rel);
    const on = [sql`${sql.ref(`${a}.id`)} = ${sql.ref(`t.${rel.via}`)}`, ...visibility(ctx, target, a)];
    return sql`LEFT JOIN ${sql.table(target.table)} AS ${sql.id(a)} ON ${sql.join(on, sql` AND `)}`;
  });
  return sql.join(parts, sql` `);
}

export function relationsOf(conditions: readonly Condition[]): Set<RelationDef> {
  const out = new Set<RelationDef>();
  for (const c of conditions) if (c.ref.relation) out.add(c.ref.relation);
  return out;
}

export function whereClause(ctx: Ctx, def: ResourceDef, conditions: readonly Condition[]): Sql {
  const parts = [...visibility(ctx, def, 't'),
    ...conditions.map((c) => compileCondition(c, exprOf(ctx, c.ref), ctx.database.hooks))];
  return sql.join(parts, sql` AND `);
}

/** ORDER BY with `id` as the final tie-breaker, so pages never overlap or skip. */
export function orderClause(ctx: Ctx, order: readonly OrderTerm[]): Sql {
  const items = order.flatMap((term) => orderSql(term, exprOf(ctx, term.ref), ctx.database.hooks));
  const byOwnId = order.some((t) => !t.ref.relation && t.ref.field.name === 'id' && t.ref.keys.length === 0);
  if (!byOwnId) items.push(sql`t.id ASC`);
  return sql.join(items, sql`, `);
}
