// Records are written as JSON by the database: keys in the contract's order,
// values as JSON.stringify would write them, dynamic JSON inserted as stored (its
// key order and number text intact), and each embed from a subquery on the
// embedded record's primary key (one-to-many embeds, an asset's files, from one
// ordered aggregate) — so a page is one statement, never one per record, and a
// statement joins only what its filters and order need.
import { sql } from 'kysely';
import type { JsonMember, Sql } from '../model/dialect.ts';
import { relationFields } from '../filter/resolve.ts';
import type { FieldDef, RelationDef, ResourceDef } from '../model/types.ts';
import { columnExpr, visible } from './select.ts';
import type { Shape } from './types.ts';

const members = (s: Shape, fields: readonly FieldDef[], alias: string): JsonMember[] =>
  fields.map((f) => ({ name: f.name, type: f.type, value: columnExpr(s, f, alias) }));

/** The JSON object of `fields` of the record at `alias`, as the dialect's JSON value (to store). */
export const objectSql = (s: Shape, fields: readonly FieldDef[], alias: string): Sql => s.hooks.jsonObject(members(s, fields, alias));

/** The same object as JSON text (to answer with). */
export const objectText = (s: Shape, fields: readonly FieldDef[], alias: string): Sql => s.hooks.jsonObjectText(members(s, fields, alias));

/** `{"a":null,"b":null,…}`: an embedded record the caller may not see, or an empty one shown as such. */
export const nullsJson = (fields: readonly FieldDef[]) => `{${fields.map((f) => `${JSON.stringify(f.name)}:null`).join(',')}}`;

/**
 * Whether the embedded record is visible whenever the record embedding it is: it
 * is the record's own company, or a same-company reference (checked on every
 * write) to a resource without further visibility rules. Other embeds —
 * a parent company, an audit entry's asset or user, a message's sender — are
 * checked against the scope.
 */
function visibleWithOwner(def: ResourceDef, rel: RelationDef, target: ResourceDef): boolean {
  if (rel.via === def.scopeColumn) return true;
  const field = def.fields.find((f) => f.name === rel.via);
  return field?.references?.rule === 'same-company' && !target.visible;
}

/** An embedded record the caller may not see shows with every member null. */
function oneJson(s: Shape, def: ResourceDef, rel: RelationDef): Sql {
  const target = s.catalog.lookup(rel.resource);
  const fields = relationFields(rel, target);
  const a = `e_${rel.name}`;
  const nulls = sql.lit(nullsJson(fields));
  const via = sql.ref(`t.${rel.via}`);
  const scoped = visibleWithOwner(def, rel, target) ? sql`` : sql`AND ${visible(s, target, a)}`;
  return sql`(CASE WHEN ${via} IS NULL THEN ${rel.empty === 'nulls' ? nulls : sql.lit('null')}
    ELSE COALESCE((SELECT ${objectText(s, fields, a)} FROM ${sql.table(target.table)} AS ${sql.id(a)}
      WHERE ${sql.ref(`${a}.id`)} = ${via} ${scoped}), ${nulls}) END)`;
}

/**
 * Most records have no children: one index probe answers `[]` before any aggregate
 * is set up. Children that refer to their parent as a same-company reference (an
 * asset's files) are visible with it.
 */
function manyJson(s: Shape, rel: RelationDef): Sql {
  const target = s.catalog.lookup(rel.resource);
  const a = `m_${rel.name}`;
  const back = sql.ref(`${a}.${rel.back}`);
  const sameCompany = target.fields.find((f) => f.name === rel.back)?.references?.rule === 'same-company' && !target.visible;
  const from = sql`FROM ${sql.table(target.table)} AS ${sql.id(a)} WHERE ${back} = t.id ${sameCompany ? sql`` : sql`AND ${visible(s, target, a)}`}`;
  const children = s.hooks.jsonArrayText(objectText(s, relationFields(rel, target), a), from, sql.ref(`${a}.id`));
  return sql`(CASE WHEN EXISTS (SELECT 1 FROM ${sql.table(target.table)} AS ${sql.id(a)} WHERE ${back} = t.id)
    THEN ${children} ELSE '[]' END)`;
}

/**
 * Records linked through a link table (a check's standards), in the link's order,
 * each one the caller may not see with every member null.
 */
function linkedJson(s: Shape, rel: RelationDef & { through: NonNullable<RelationDef['through']> }): Sql {
  const { through } = rel;
  const target = s.catalog.lookup(rel.resource);
  const fields = relationFields(rel, target);
  const a = `m_${rel.name}`;
  const l = `l_${rel.name}`;
  const item = sql`(CASE WHEN ${sql.ref(`${a}.id`)} IS NULL THEN ${sql.lit(nullsJson(fields))} ELSE ${objectText(s, fields, a)} END)`;
  const from = sql`FROM ${sql.table(through.table)} AS ${sql.id(l)} LEFT JOIN ${sql.table(target.table)} AS ${sql.id(a)}
    ON ${sql.ref(`${a}.id`)} = ${sql.ref(`${l}.${through.to}`)} AND ${visible(s, target, a)} WHERE ${sql.ref(`${l}.${through.from}`)} = t.id`;
  return s.hooks.jsonArrayText(item, from, sql.ref(`${l}.${through.position}`));
}

function embedJson(s: Shape, def: ResourceDef, rel: RelationDef): Sql {
  if (rel.through) return linkedJson(s, { ...rel, through: rel.through });
  return rel.back ? manyJson(s, rel) : oneJson(s, def, rel);
}

/** The JSON text of a record of `def` at alias `t` with its embeds, and after them its version. */
export function recordJson(s: Shape, def: ResourceDef): Sql {
  const embeds = def.relations.map((rel): JsonMember => ({ name: rel.name, type: 'embed', value: embedJson(s, def, rel) }));
  const own = members(s, def.fields.filter((f) => !f.counter), 't');
  return s.hooks.jsonObjectText([...own, ...embeds, ...members(s, def.fields.filter((f) => f.counter), 't')]);
}
