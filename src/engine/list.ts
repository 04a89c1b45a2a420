// GET. A page is at most two statements, each compiled once per shape and run
// prepared: the count, and the page itself — its ids chosen first through the
// indexes that serve the filters and order (a deferred join), then those records
// written as JSON by the database with their embeds. A query that names one id
// matches one record at most: one statement, whose row count is the total.
// The page size is part of the SQL text, not a parameter: SQLite sorts a known
// small LIMIT in memory but prepares a full sorter for a bound one (10× slower).
import { sql } from 'kysely';
import { Param, type Values } from '../db/statements.ts';
import type { ResourceDef } from '../model/types.ts';
import { type Ctx, type Shape, shapeOf } from './context.ts';
import { requestValues } from './params.ts';
import type { Query } from './query.ts';
import { recordJson } from './record-json.ts';
import { joinClause, orderClause, relationsOf, whereClause } from './select.ts';
import { byId, type QueryShape, queryShape } from './shape.ts';

export interface Page {
  readonly total: number;
  /** Each record as JSON text. */
  readonly records: readonly string[];
}

const table = (def: ResourceDef) => sql.table(def.table);
const OFFSET = new Param('offset');

function countSql(s: Shape, def: ResourceDef, q: QueryShape) {
  return sql`SELECT COUNT(*) AS n FROM ${table(def)} AS t ${joinClause(s, def, relationsOf(q.conditions))}
    WHERE ${whereClause(s, def, q.conditions)}`;
}

function pageSql(s: Shape, def: ResourceDef, q: QueryShape, order: Query['order'], pageSize: number) {
  const ids = sql`SELECT t.id AS id FROM ${table(def)} AS t ${joinClause(s, def, relationsOf(q.conditions, order))}
    WHERE ${whereClause(s, def, q.conditions)} ORDER BY ${orderClause(s, order)} LIMIT ${sql.lit(pageSize)} OFFSET ${OFFSET}`;
  return sql`SELECT ${recordJson(s, def)} AS j FROM (${ids}) AS p JOIN ${table(def)} AS t ON t.id = p.id
    ${joinClause(s, def, relationsOf([], order))} ORDER BY ${orderClause(s, order)}`;
}

function oneSql(s: Shape, def: ResourceDef, q: QueryShape) {
  return sql`SELECT ${recordJson(s, def)} AS j FROM ${table(def)} AS t ${joinClause(s, def, relationsOf(q.conditions))}
    WHERE ${whereClause(s, def, q.conditions, 'probe')}`;
}

export async function listRecords(ctx: Ctx, def: ResourceDef, query: Query): Promise<Page> {
  const s = shapeOf(ctx);
  const q = queryShape(query);
  const { pageSize } = ctx.limits;
  const values: Values = { ...requestValues(ctx), ...q.values, offset: (query.page - 1) * pageSize };
  const { database } = ctx;
  const prefix = `${s.level}|${def.name}|${q.where}`;
  if (byId(query)) {
    const rows = await database.read<{ j: string }>(database.statements.get(`one|${prefix}`, () => oneSql(s, def, q)), values);
    return { total: rows.length, records: query.page === 1 ? rows.map((r) => r.j) : [] };
  }
  const [counted] = await database.read<{ n: number | string }>(database.statements.get(`count|${prefix}`, () => countSql(s, def, q)), values);
  const total = Number(counted?.n ?? 0);
  if ((query.page - 1) * pageSize >= total) return { total, records: [] };
  const rows = await database.read<{ j: string }>(
    database.statements.get(`page|${prefix}|${q.order}|${pageSize}`, () => pageSql(s, def, q, query.order, pageSize)), values);
  return { total, records: rows.map((r) => r.j) };
}

/**
 * Every record the query matches, `batch` at a time, in the query's order (the CSV
 * export): the page statement at growing offsets, without the count.
 */
export async function* allRecords(ctx: Ctx, def: ResourceDef, query: Query, batch = 1000): AsyncGenerator<string[]> {
  const s = shapeOf(ctx);
  const q = queryShape(query);
  const { database } = ctx;
  const statement = database.statements.get(`page|${s.level}|${def.name}|${q.where}|${q.order}|${batch}`,
    () => pageSql(s, def, q, query.order, batch));
  for (let offset = 0; ; offset += batch) {
    const rows = await database.read<{ j: string }>(statement, { ...requestValues(ctx), ...q.values, offset });
    if (rows.length > 0) yield rows.map((r) => r.j);
    if (rows.length < batch) return;
  }
}
