// The tenancy boundary: the caller's company and all its descendants,
// read from the company closure table (kept by triggers in the same transaction
// as every company insert, move and delete). The root is a parameter, so one
// statement serves every caller; every statement the engine runs over tenant rows
// confines its main table and every join to it.
import { sql } from 'kysely';
import type { Sql, SqlDialect } from '../model/dialect.ts';
import { PARAMS } from './params.ts';

/**
 * `expr` names a company of the caller's scope. As a list (the set of the scope's
 * companies), they drive the `(company_id, …)` indexes of the table they filter; as
 * a probe (`EXISTS`), one indexed look-up checks a single joined or found record.
 */
export const inScope = (hooks: SqlDialect, expr: Sql, form: 'list' | 'probe' = 'list'): Sql => (form === 'list'
  ? hooks.inSubquery(expr, sql`SELECT descendant_id FROM company_closure WHERE ancestor_id = ${PARAMS.root}`)
  : sql`EXISTS (SELECT 1 FROM company_closure AS sc WHERE sc.ancestor_id = ${PARAMS.root} AND sc.descendant_id = ${expr})`);
