// CSV export: GET with `Accept: text/csv` answers every record the
// query matches — no paging — as RFC 4180 text, streamed a batch of records at a
// time. Columns: the record's own fields in GET order without JSON fields (but those
// shown as their JSON text, FieldDef.csvText), then
// `data.<key>` for each top-level key of `data` met in the result (sorted), then
// the name of an embedded company and the description of each other embed.
// A cell that a spreadsheet would run as a formula gets a leading `'`.
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { JsonNumber, JsonObject, type JsonValue, memberOf, parseJson, stringifyJson } from '../model/json.ts';
import type { FieldDef, RelationDef, ResourceDef } from '../model/types.ts';
import { shapeOf } from './context.ts';
import { allRecords } from './list.ts';
import { readRows } from './params.ts';
import { joinClause, relationsOf, whereClause } from './select.ts';
import { queryShape } from './shape.ts';
import type { Ctx, Query } from './types.ts';

interface Column {
  readonly name: string;
  readonly cell: (record: JsonObject) => JsonValue | undefined;
}

/** The embeds that have a column: one-to-one, with a name (companies) or a description. */
function embedColumns(ctx: Ctx, def: ResourceDef): Column[] {
  return def.relations.filter((r): r is RelationDef & { via: string } => r.via !== undefined).flatMap((rel) => {
    const target = ctx.catalog.lookup(rel.resource);
    const shown = target.name === 'companies' ? 'name' : 'description';
    if (!target.fields.some((f) => f.name === shown)) return [];
    return [{ name: `${rel.name}.${shown}`, cell: (r) => memberOf(r.entries.get(rel.name), shown) }];
  });
}

/** The top-level keys of `data` among the records the query matches, sorted. */
async function dataKeys(ctx: Ctx, def: ResourceDef, query: Query): Promise<string[]> {
  if (!def.fields.some((f) => f.name === 'data' && f.type === 'json')) return [];
  const s = shapeOf(ctx);
  const q = queryShape(query);
  const e = ctx.database.hooks.jsonEntries(sql.ref('t.data'));
  const rows = await readRows<{ key: string }>(ctx, `csv-keys|${def.name}|${q.where}`, () => sql`
    SELECT DISTINCT ${e.key} AS key FROM ${sql.table(def.table)} AS t ${joinClause(s, def, relationsOf(q.conditions))} ${e.join}
    WHERE ${whereClause(s, def, q.conditions)}`, q.values);
  return rows.map((r) => String(r.key)).sort();
}

/** A value as its cell: null empty, strings as they are, numbers as written, anything else as its JSON text. */
function text(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return value instanceof JsonNumber ? value.text : stringifyJson(value);
}

/** The formula guard, then RFC 4180 quoting where the cell needs it. */
export function csvCell(value: JsonValue | undefined): string {
  let t = text(value);
  if (/^[=+\-@\t\r']/.test(t)) t = `'${t}`;
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

const line = (cells: readonly (JsonValue | undefined)[]) => `${cells.map(csvCell).join(',')}\r\n`;

/** The columns of an export: own fields without JSON fields, `data.<key>` for `keys`, the embeds. */
export function csvColumns(ctx: Ctx, def: ResourceDef, keys: readonly string[] = []): Column[] {
  const own = def.fields.filter((f: FieldDef) => f.type !== 'json' || f.csvText).map((f): Column => ({ name: f.name, cell: (r) => r.entries.get(f.name) }));
  const data = keys.map((k): Column => ({ name: `data.${k}`, cell: (r) => memberOf(r.entries.get('data'), k) }));
  return [...own, ...data, ...embedColumns(ctx, def)];
}

/**
 * The whole export as a stream: the header row, then every matching record in the
 * query's order. `written` hears how many records have been turned into rows so far;
 * `keep`, when given, passes over the records it refuses (a rule a filter cannot say).
 */
export async function csvExport(ctx: Ctx, def: ResourceDef, query: Query, written?: (records: number) => void,
  keep?: (record: JsonObject) => boolean): Promise<Readable> {
  const columns = csvColumns(ctx, def, await dataKeys(ctx, def, query));
  async function* lines(): AsyncGenerator<string> {
    yield line(columns.map((c) => c.name));
    let records = 0;
    for await (const batch of allRecords(ctx, def, query)) {
      written?.((records += batch.length));
      yield batch.map((json) => {
        const record = parseJson(json) as JsonObject;
        return keep && !keep(record) ? '' : line(columns.map((c) => c.cell(record)));
      }).join('');
    }
  }
  return Readable.from(lines());
}
