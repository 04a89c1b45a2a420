// Records are written straight to JSON text from SQL rows: keys in the contract's
// order, dynamic JSON inserted as stored (its key order intact), no intermediate
// objects. One compiled plan per resource.
import { sql } from 'kysely';
import type { Sql } from '../db/dialect.ts';
import { relationFields } from '../filter/resolve.ts';
import type { FieldDef, FieldType, RelationDef, ResourceDef, Row, SqlValue } from '../model/types.ts';
import type { Ctx } from './context.ts';
import { aliasOf, columnExpr } from './select.ts';

export function valueJson(type: FieldType, v: SqlValue | undefined): string {
  if (v === null || v === undefined) return 'null';
  if (type === 'json') return String(v);
  if (type === 'int' || type === 'bool') return String(v);
  return JSON.stringify(v);
}

interface Column { readonly key: string; readonly alias: string; readonly type: FieldType }
interface OneEmbed { readonly key: string; readonly via: string; readonly id: string; readonly columns: readonly Column[]; readonly nulls: string; readonly empty: string }
interface ManyEmbed { readonly key: string; readonly rel: RelationDef }

export interface Plan {
  /** SELECT list: own fields, then every one-to-one embed's fields. */
  select(ctx: Ctx): Sql;
  readonly idAlias: string;
  readonly many: readonly ManyEmbed[];
  /** `children`: per one-to-many relation, record id → serialized child records. */
  write(row: Row, children?: ReadonlyMap<RelationDef, ReadonlyMap<SqlValue, string[]>>): string;
}

const plans = new WeakMap<ResourceDef, Plan>();
const flatPlans = new WeakMap<readonly FieldDef[], Plan>();

function writeColumns(row: Row, columns: readonly Column[]): string {
  let out = '';
  for (const c of columns) out += `${out ? ',' : ''}${c.key}${valueJson(c.type, row[c.alias])}`;
  return `{${out}}`;
}

/** The plan for a resource's records with their embeds. */
export function planFor(def: ResourceDef, ctx: Ctx): Plan {
  let plan = plans.get(def);
  if (plan) return plan;
  const exprs: { field: FieldDef; table: string; alias: string }[] = [];
  const add = (field: FieldDef, table: string) => {
    const alias = `c${exprs.length}`;
    exprs.push({ field, table, alias });
    return { key: `${JSON.stringify(field.name)}:`, alias, type: field.type };
  };
  const own = def.fields.map((f) => add(f, 't'));
  const aliasByName = new Map(def.fields.map((f, i) => [f.name, own[i]!.alias]));
  const ones: OneEmbed[] = [];
  const many: ManyEmbed[] = [];
  for (const rel of def.relations) {
    if (rel.back) { many.push({ key: `${JSON.stringify(rel.name)}:`, rel }); continue; }
    const fields = relationFields(rel, ctx.catalog.lookup(rel.resource));
    const columns = fields.map((f) => add(f, aliasOf(rel)));
    const nulls = `{${columns.map((c) => `${c.key}null`).join(',')}}`;
    ones.push({ key: `${JSON.stringify(rel.name)}:`, via: aliasByName.get(rel.via!)!, id: columns[0]!.alias, columns, nulls, empty: rel.empty === 'nulls' ? nulls : 'null' });
  }
  const idAlias = aliasByName.get('id')!;
  plan = {
    idAlias,
    many,
    select: (c) => sql.join(exprs.map((e) => sql`${columnExpr(c, e.field, e.table)} AS ${sql.id(e.alias)}`), sql`, `),
    write(row, children) {
      let out = writeColumns(row, own).slice(0, -1);
      for (const o of ones) {
        const embed = row[o.via] === null ? o.empty : row[o.id] === null ? o.nulls : writeColumns(row, o.columns);
        out += `,${o.key}${embed}`;
      }
      for (const m of many) out += `,${m.key}[${(children?.get(m.rel)?.get(row[idAlias]!) ?? []).join(',')}]`;
      return `${out}}`;
    },
  };
  plans.set(def, plan);
  return plan;
}

/** The plan for records without their embeds (children in a one-to-many list). */
export function flatPlanFor(fields: readonly FieldDef[]): Plan {
  let plan = flatPlans.get(fields);
  if (plan) return plan;
  const columns = fields.map((f, i) => ({ key: `${JSON.stringify(f.name)}:`, alias: `c${i}`, type: f.type, field: f }));
  plan = {
    idAlias: 'c0',
    many: [],
    select: (c) => sql.join(columns.map((col) => sql`${columnExpr(c, col.field, 't')} AS ${sql.id(col.alias)}`), sql`, `),
    write: (row) => writeColumns(row, columns),
  };
  flatPlans.set(fields, plan);
  return plan;
}
