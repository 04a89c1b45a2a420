// The dialect of a Kysely instance, for code that has one and no Database (the
// migrations, which are frozen per-engine DDL and pick their statements by it).
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../model/dialect.ts';
import { onPostgres, postgresHooks } from './postgres.ts';
import { sqliteHooks } from './sqlite.ts';

export const dialectOf = (db: Kysely<unknown>): SqlDialect => (onPostgres(db) ? postgresHooks : sqliteHooks);

/** Of a choice per engine, this engine's. */
export const forEngine = <T>(db: Kysely<unknown>, choices: { readonly sqlite: T; readonly postgres: T }): T => choices[dialectOf(db).kind];
