// Records are written as JSON text by the database: keys in the contract's order,
// values as JSON.stringify would write them, dynamic JSON inserted as stored (its
// key order and number text intact), embeds of one-to-one relations from the
// statement's joins and one-to-many embeds (an asset's files) from one grouped
// subquery per record — so a page is one statement, never one per record.
import { sql } from 'kysely';
import type { Sql } from '../db/dialect.ts';
import { relationFields } from '../filter/resolve.ts';
import type { FieldDef, RelationDef, ResourceDef } from '../model/types.ts';
import type { Shape } from './context.ts';
import { aliasOf, columnExpr, visible } from './select.ts';

const concat = (parts: readonly Sql[]) => sql`(${sql.join(parts, sql` || `)})`;

const key = (name: string, first: boolean) => sql.lit(`${first ? '{' : ','}${JSON.stringify(name)}:`);

/** The JSON object of `fields` of the record at `alias`. */
export function objectSql(s: Shape, fields: readonly FieldDef[], alias: string, tail: readonly Sql[] = []): Sql {
  const parts = fields.flatMap((f, i) => [key(f.name, i === 0), s.hooks.jsonValue(f.type, columnExpr(s, f, alias))]);
  return concat([...parts, ...tail, sql.lit('}')]);
}

/** `{"a":null,"b":null,…}`: an embedded record the caller may not see, or an empty one shown as such. */
export const nullsJson = (fields: readonly FieldDef[]) => `{${fields.map((f) => `${JSON.stringify(f.name)}:null`).join(',')}}`;

function oneJson(s: Shape, rel: RelationDef): Sql {
  const fields = relationFields(rel, s.catalog.lookup(rel.resource));
  const a = aliasOf(rel);
  const nulls = nullsJson(fields);
  const empty = rel.empty === 'nulls' ? nulls : 'null';
  return sql`(CASE WHEN ${sql.ref(`t.${rel.via}`)} IS NULL THEN ${sql.lit(empty)} WHEN ${sql.ref(`${a}.id`)} IS NULL
    THEN ${sql.lit(nulls)} ELSE ${objectSql(s, fields, a)} END)`;
}

function manyJson(s: Shape, rel: RelationDef): Sql {
  const target = s.catalog.lookup(rel.resource);
  const a = `m_${rel.name}`;
  const children = s.hooks.joinGroup(objectSql(s, relationFields(rel, target), a), sql.ref(`${a}.id`));
  return sql`('[' || COALESCE((SELECT ${children} FROM ${sql.table(target.table)} AS ${sql.id(a)}
    WHERE ${sql.ref(`${a}.${rel.back}`)} = t.id AND ${visible(s, target, a)}), '') || ']')`;
}

/** A record of `def` at alias `t` with its embeds; the statement joins every one-to-one relation. */
export function recordJson(s: Shape, def: ResourceDef): Sql {
  const embeds = def.relations.flatMap((rel) => [key(rel.name, false), rel.back ? manyJson(s, rel) : oneJson(s, rel)]);
  return objectSql(s, def.fields, 't', embeds);
}
