// Helpers of the two dialects (db/sqlite.ts, db/postgres.ts); their interface is model/dialect.ts.
import { sql } from 'kysely';
import type { JsonMember, Sql, SqlDialect } from '../model/dialect.ts';

export function errorCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

/** A JSON object's text by concatenation: each member's JSON text after its quoted name, embeds as they come. */
export const concatObject = (members: readonly JsonMember[], jsonValue: SqlDialect['jsonValue']): Sql =>
  sql`(${sql.join(members.map((m, i) => sql`${sql.lit(`${i === 0 ? '{' : ','}${JSON.stringify(m.name)}:`)} || ${
    m.type === 'embed' ? m.value : jsonValue(m.type, m.value)}`), sql` || `)} || '}')`;
