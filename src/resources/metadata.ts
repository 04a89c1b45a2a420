// GET /3.0/metadata: per endpoint, the custom keys seen in the
// caller's records' `data`, with a display name, a type, whether they are meant
// for people (`$` keys are API-only), and what the company declared about them in
// its `data.custom_fields` ({"assets": {"costcode": {"display_name", "type", "options", "constraints"}}}).
import { sql } from 'kysely';
import { shapeOf } from '../engine/context.ts';
import { readRows } from '../engine/params.ts';
import { visible } from '../engine/select.ts';
import { invalidFilter } from '../errors.ts';
import { isDate, isDatetime } from '../model/dates.ts';
import { JsonObject, type JsonValue, parseJson, stringifyJson } from '../model/json.ts';
import type { ResourceDef } from '../model/types.ts';
import type { Ctx, Endpoint } from '../engine/types.ts';

interface KeyStats { key: string; kind: string | null; n: number | string; dates: number | string; datetimes: number | string; lo: string | null; hi: string | null }

const TYPES = new Set(['int', 'bool', 'string', 'datetime', 'date', 'options']);

function inferType(stats: readonly KeyStats[]): string {
  const kinds = new Set(stats.map((s) => s.kind).filter((k) => k !== 'null'));
  if (kinds.size !== 1) return 'string';
  if (kinds.has('boolean')) return 'bool';
  if (kinds.has('number')) return 'int';
  const s = stats.find((x) => x.kind === 'string');
  // Keys holding only objects or arrays have no type of their own.
  if (!s) return 'string';
  // The LIKE shapes count candidates; the extremes must also be real dates (`next-tu-es` has the shape of one).
  const all = (check: (v: string) => boolean) => s.lo !== null && s.hi !== null && check(s.lo) && check(s.hi);
  if (Number(s.dates) === Number(s.n) && all(isDate)) return 'date';
  if (Number(s.datetimes) === Number(s.n) && all(isDatetime)) return 'datetime';
  return 'string';
}

async function keysOf(ctx: Ctx, def: ResourceDef): Promise<Map<string, KeyStats[]>> {
  const e = ctx.database.hooks.jsonEntries(sql.ref('t.data'));
  const rows = await readRows<KeyStats>(ctx, `metadata|${def.name}`, () => sql`
    SELECT ${e.key} AS key, ${e.kind} AS kind, COUNT(*) AS n, MIN(${e.text}) AS lo, MAX(${e.text}) AS hi,
      SUM(CASE WHEN ${e.text} LIKE '____-__-__' THEN 1 ELSE 0 END) AS dates,
      SUM(CASE WHEN ${e.text} LIKE '____-__-__ __:__:__' THEN 1 ELSE 0 END) AS datetimes
    FROM ${sql.table(def.table)} AS t ${e.join} WHERE ${visible(shapeOf(ctx), def, 't')}
    GROUP BY 1, 2 ORDER BY 1, 2`);
  const out = new Map<string, KeyStats[]>();
  for (const r of rows) out.set(r.key, [...(out.get(r.key) ?? []), r]);
  return out;
}

/** What the caller's company declared for an endpoint's keys. */
async function declaredFields(ctx: Ctx): Promise<JsonValue | undefined> {
  const company = await ctx.database.db.selectFrom('companies').select('data').where('id', '=', ctx.principal.companyId).executeTakeFirst();
  const data = company?.data ? parseJson(company.data) : null;
  return data instanceof JsonObject ? data.entries.get('custom_fields') : undefined;
}

function describe(key: string, stats: readonly KeyStats[], declared: JsonValue | undefined): string {
  const d = declared instanceof JsonObject ? declared.entries : new Map<string, JsonValue>();
  const name = d.get('display_name');
  const type = d.get('type');
  const members: [string, string][] = [
    ['display_name', JSON.stringify(typeof name === 'string' ? name : key)],
    ['type', JSON.stringify(typeof type === 'string' && TYPES.has(type) ? type : inferType(stats))],
    ['visible', key.startsWith('$') ? 'false' : 'true'],
  ];
  for (const extra of ['constraints', 'options']) {
    const v = d.get(extra);
    if (v !== undefined) members.push([extra, stringifyJson(v)]);
  }
  return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
}

export const metadataEndpoint: Endpoint = {
  name: 'metadata',
  access: { GET: 'readonly' },
  handlers: {
    async GET(c) {
      const { ctx } = c;
      if (c.segments.length > 0) throw invalidFilter(c.segments[0]!);
      const declared = await declaredFields(ctx);
      const parts: string[] = [];
      const withData = ctx.catalog.all.filter((d) => d.fields.some((f) => f.name === 'data' && f.type === 'json'))
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const def of withData) {
        const seen = await keysOf(ctx, def);
        const forEndpoint = declared instanceof JsonObject ? declared.entries.get(def.name) : undefined;
        const declaredKeys = forEndpoint instanceof JsonObject ? forEndpoint.entries : new Map<string, JsonValue>();
        const keys = [...new Set([...seen.keys(), ...declaredKeys.keys()])].sort();
        const body = keys.map((k) => `${JSON.stringify(k)}:${describe(k, seen.get(k) ?? [], declaredKeys.get(k))}`).join(',');
        parts.push(`${JSON.stringify(def.name)}:{${body}}`);
      }
      return { response: `[{${parts.join(',')}}]`, pagination: { total_pages: 1, total_records: 1 } };
    },
  },
};
