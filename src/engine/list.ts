// GET. The scope is resolved once to company ids; then one count, one query for
// the ids of the page (joining only what filters and ordering need), one query
// for those records with all their embeds, and one per one-to-many embed.
// Embeds are thus fetched for 30 records, never for every match.
import { sql } from 'kysely';
import { relationFields } from '../filter/resolve.ts';
import type { RelationDef, ResourceDef, Row, SqlValue } from '../model/types.ts';
import { type Ctx, scopeOf } from './context.ts';
import type { Query } from './query.ts';
import { resolvedScope } from './scope.ts';
import { joinClause, orderClause, relationsOf, visible, whereClause } from './select.ts';
import { flatPlanFor, type Plan, planFor } from './serialize.ts';

export interface Page {
  readonly total: number;
  /** Each record as JSON text. */
  readonly records: readonly string[];
}

export async function listRecords(unscoped: Ctx, def: ResourceDef, query: Query): Promise<Page> {
  const ctx: Ctx = { ...unscoped, scope: await resolvedScope(unscoped.database.db, unscoped.principal.companyId) };
  const { db } = ctx.database;
  const w = scopeOf(ctx).with;
  const table = sql.table(def.table);
  const where = whereClause(ctx, def, query.conditions);
  const filtered = relationsOf(query.conditions);
  const counted = await sql<{ n: number | string }>`${w} SELECT COUNT(*) AS n FROM ${table} AS t
    ${joinClause(ctx, def, filtered)} WHERE ${where}`.execute(db);
  const total = Number(counted.rows[0]?.n ?? 0);
  const { pageSize } = ctx.limits;
  const offset = (query.page - 1) * pageSize;
  if (offset >= total) return { total, records: [] };
  const ordered = new Set([...filtered, ...query.order.flatMap((t) => (t.ref.relation ? [t.ref.relation] : []))]);
  const { rows: page } = await sql<{ id: number }>`${w} SELECT t.id AS id FROM ${table} AS t ${joinClause(ctx, def, ordered)}
    WHERE ${where} ORDER BY ${orderClause(ctx, query.order)} LIMIT ${pageSize} OFFSET ${offset}`.execute(db);
  if (page.length === 0) return { total, records: [] };
  const plan = planFor(def, ctx);
  const ids = page.map((r) => Number(r.id));
  const { rows } = await sql<Row>`${w} SELECT ${plan.select(ctx)} FROM ${table} AS t ${joinClause(ctx, def, def.relations)}
    WHERE t.id IN (${sql.join(ids)}) AND ${visible(ctx, def, 't')}`.execute(db);
  const position = new Map(ids.map((id, i) => [id, i]));
  rows.sort((a, b) => position.get(Number(a[plan.idAlias]))! - position.get(Number(b[plan.idAlias]))!);
  const children = await loadChildren(ctx, plan, ids);
  return { total, records: rows.map((r) => plan.write(r, children)) };
}

/** The one-to-many embeds (an asset's files) of a page of records, by parent id. */
async function loadChildren(ctx: Ctx, plan: Plan, ids: readonly number[]): Promise<Map<RelationDef, Map<SqlValue, string[]>>> {
  const out = new Map<RelationDef, Map<SqlValue, string[]>>();
  for (const { rel } of plan.many) {
    const target = ctx.catalog.lookup(rel.resource);
    const child = flatPlanFor(relationFields(rel, target));
    const back = sql.ref(`t.${rel.back}`);
    const { rows: found } = await sql<Row>`${scopeOf(ctx).with} SELECT ${child.select(ctx)}, ${back} AS parent FROM ${sql.table(target.table)} AS t
      WHERE ${back} IN (${sql.join(ids)}) AND ${visible(ctx, target, 't')} ORDER BY t.id`.execute(ctx.database.db);
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
