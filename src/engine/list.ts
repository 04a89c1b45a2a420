// GET: one count and one page query, both confined to the scope, plus one query
// per one-to-many embed for the records of the page.
import { sql } from 'kysely';
import { relationFields } from '../filter/resolve.ts';
import type { RelationDef, ResourceDef, Row, SqlValue } from '../model/types.ts';
import type { Ctx } from './context.ts';
import type { Query } from './query.ts';
import { scopeCte } from './scope.ts';
import { joinClause, orderClause, relationsOf, visibility, whereClause } from './select.ts';
import { flatPlanFor, type Plan, planFor } from './serialize.ts';

export interface Page {
  readonly total: number;
  /** Each record as JSON text. */
  readonly records: readonly string[];
}

export async function listRecords(ctx: Ctx, def: ResourceDef, query: Query): Promise<Page> {
  const { db } = ctx.database;
  const cte = scopeCte(ctx.principal.companyId);
  const table = sql.table(def.table);
  const where = whereClause(ctx, def, query.conditions);
  const counted = await sql<{ n: number | string }>`${cte} SELECT COUNT(*) AS n FROM ${table} AS t
    ${joinClause(ctx, def, relationsOf(query.conditions))} WHERE ${where}`.execute(db);
  const total = Number(counted.rows[0]?.n ?? 0);
  const { pageSize } = ctx.limits;
  const offset = (query.page - 1) * pageSize;
  if (offset >= total) return { total, records: [] };
  const plan = planFor(def, ctx);
  const { rows } = await sql<Row>`${cte} SELECT ${plan.select(ctx)} FROM ${table} AS t
    ${joinClause(ctx, def, def.relations)} WHERE ${where}
    ORDER BY ${orderClause(ctx, query.order)} LIMIT ${pageSize} OFFSET ${offset}`.execute(db);
  const children = await loadChildren(ctx, plan, rows);
  return { total, records: rows.map((r) => plan.write(r, children)) };
}

/** The one-to-many embeds (an asset's files) of a page of records, by parent id. */
async function loadChildren(ctx: Ctx, plan: Plan, rows: readonly Row[]): Promise<Map<RelationDef, Map<SqlValue, string[]>>> {
  const out = new Map<RelationDef, Map<SqlValue, string[]>>();
  if (rows.length === 0) return out;
  const ids = rows.map((r) => r[plan.idAlias]!);
  for (const { rel } of plan.many) {
    const target = ctx.catalog.lookup(rel.resource);
    const child = flatPlanFor(relationFields(rel, target));
    const back = sql.ref(`t.${rel.back}`);
    const { rows: found } = await sql<Row>`${scopeCte(ctx.principal.companyId)}
      SELECT ${child.select(ctx)}, ${back} AS parent FROM ${sql.table(target.table)} AS t
      WHERE ${back} IN (${sql.join(ids)}) AND ${sql.join(visibility(ctx, target, 't'), sql` AND `)} ORDER BY t.id`.execute(ctx.database.db);
    const byParent = new Map<SqlValue, string[]>();
    for (const r of found) {
      const list = byParent.get(r.parent!) ?? [];
      list.push(child.write(r));
      byParent.set(r.parent!, list);
    }
    out.set(rel, byParent);
  }
  return out;
}
