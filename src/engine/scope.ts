// The tenancy boundary (spec §3): the caller's company and all its descendants.
// Every statement the engine runs over tenant rows confines its main table and
// every join to it, so no resource can forget to.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Sql } from '../db/dialect.ts';

export interface Scope {
  /** Prefix for every statement that uses `contains` (a CTE, or nothing). */
  readonly with: Sql;
  /** `expr` names a company of the scope. */
  contains(expr: Sql): Sql;
}

const tree = (root: number) => sql`WITH RECURSIVE scope(id) AS (
  SELECT CAST(${root} AS bigint) UNION SELECT c.id FROM companies c JOIN scope s ON c.parent_id = s.id)`;

/**
 * The scope as a recursive CTE evaluated inside each statement: always current,
 * also within a transaction that is itself adding companies (writes use it).
 */
export function treeScope(root: number): Scope {
  return { with: tree(root), contains: (expr) => sql`${expr} IN (SELECT id FROM scope)` };
}

/** Beyond this many companies the id list is left to the CTE. */
const MAX_LISTED = 500;

/**
 * The scope resolved once to its company ids (reads use it): the planner then
 * sees the actual companies and uses the (company_id, …) indexes.
 */
export async function resolvedScope(db: Db, root: number): Promise<Scope> {
  const { rows } = await sql<{ id: number }>`${tree(root)} SELECT id FROM scope`.execute(db);
  if (rows.length > MAX_LISTED) return treeScope(root);
  const ids = rows.map((r) => Number(r.id));
  return { with: sql``, contains: (expr) => sql`${expr} IN (${sql.join(ids)})` };
}
