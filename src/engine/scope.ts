// The tenancy boundary. Every statement the engine runs over tenant rows starts
// with this CTE and confines its main table and every join to it, so no resource
// can forget to (spec §3).
import { sql } from 'kysely';
import type { Sql } from '../db/dialect.ts';
import type { ResourceDef } from '../model/types.ts';

/** The caller's company and all its descendants, as `scope(id)`. */
export const scopeCte = (root: number): Sql => sql`WITH RECURSIVE scope(id) AS (
  SELECT CAST(${root} AS bigint) UNION SELECT c.id FROM companies c JOIN scope s ON c.parent_id = s.id)`;

export const inScope = (alias: string, def: ResourceDef): Sql =>
  sql`${sql.ref(`${alias}.${def.scopeColumn}`)} IN (SELECT id FROM scope)`;
