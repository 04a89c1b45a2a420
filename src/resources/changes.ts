// The change feed: every create, update and delete of a record, in
// commit order, read from the events the triggers write (events/triggers.ts) —
// the same rows the webhooks' outbox delivers. Read-only, 30 a page by `seq`.
//
// A certificate sees the changes of its company tree. A session sees the changes
// of the records its user may GET: only the endpoints its level may read, and,
// where an endpoint shows a session only some records (messages), only the changes
// whose record passes the same rule — applied to the record as the change shows it.
import { sql } from 'kysely';
import { meets } from '../auth/access.ts';
import type { Sql } from '../model/dialect.ts';
import { listReply, resourceEndpoint } from '../engine/endpoint.ts';
import { parseQuery } from '../engine/query.ts';
import { cursorExpired } from '../errors.ts';
import type { Condition } from '../filter/compile.ts';
import { prunedThrough } from '../feed/prune.ts';
import type { ComputedContext, FieldDef, ResourceDef } from '../model/types.ts';
import { ADMIN_ONLY } from './fields.ts';
import type { Endpoint, Resource } from '../engine/types.ts';

const int = (name: string, nullable = false): FieldDef => ({ name, type: 'int', nullable });
const text = (name: string): FieldDef => ({ name, type: 'string' });

/** The record's fields as the change's `data` holds them, as a one-row table aliased `alias`. */
function recordOf(c: ComputedContext, def: ResourceDef, alias: string): Sql {
  const data = sql.ref(`${c.alias}.data`);
  const columns = def.fields.filter((f) => !f.computed && f.type !== 'json').map((f) => {
    const value = c.hooks.json(data, [f.name]);
    const typed = f.type === 'int' || f.type === 'bool' ? c.hooks.cast(value.number, 'int') : value.text;
    return sql`${typed} AS ${sql.id(f.name)}`;
  });
  return sql`(SELECT ${sql.join(columns)}) AS ${sql.id(alias)}`;
}

/** What a session may see of the changes of `defs` (null: everything in scope). */
function sessionRule(defs: readonly ResourceDef[], c: ComputedContext): Sql | null {
  if (c.level === 'basic') return null;
  const endpoint = sql.ref(`${c.alias}.endpoint`);
  const hidden = defs.filter((d) => !meets(c.level, d.access.GET));
  const rules = defs.filter((d) => d.visible && meets(c.level, d.access.GET)).map((d) => {
    const rule = d.visible!({ ...c, alias: 'r' });
    return rule ? sql`(${endpoint} <> ${sql.lit(d.name)} OR EXISTS (SELECT 1 FROM ${recordOf(c, d, 'r')} WHERE ${rule}))` : null;
  }).filter((r) => r !== null);
  const parts = [...(hidden.length ? [sql`${endpoint} NOT IN (${sql.join(hidden.map((d) => sql.lit(d.name)))})`] : []), ...rules];
  return parts.length ? sql.join(parts, sql` AND `) : null;
}

/** The feed over the changes of `defs` (the resources whose tables have event triggers). */
export function changesResource(defs: readonly ResourceDef[]): Resource {
  return {
    def: {
      name: 'changes', table: 'changes', verbs: ['GET'], scopeColumn: 'scope_id', access: { ...ADMIN_ONLY, GET: 'readonly' },
      fields: [
        int('seq'), text('endpoint'), int('record_id', true), text('op'), { name: 'changed', type: 'datetime' }, int('company_id', true),
        { name: 'data', type: 'json' },
      ],
      relations: [],
      visible: (c) => sessionRule(defs, c),
    },
  };
}

/** The lowest N of `seq>N` (or `seq>=N+1`) among the conditions, or null. */
function cursorOf(conditions: readonly Condition[]): { n: number; text: string } | null {
  let found: { n: number; text: string } | null = null;
  for (const c of conditions) {
    const { op, value } = c.segment;
    if (c.ref.relation || c.ref.field.name !== 'seq' || c.ref.keys.length > 0 || value === null || (op !== '>' && op !== '+')) continue;
    const n = Number(value) - (op === '+' ? 1 : 0);
    if (Number.isSafeInteger(n) && (found === null || n < found.n)) found = { n, text: value };
  }
  return found;
}

/** GET changes: a list like any other, refused with 410 when its cursor is below what was pruned. */
export function changesEndpoint(res: Resource): Endpoint {
  const { def } = res;
  // The feed reads the primary even with a read replica: the rule that no reader sees a larger seq before a smaller one commits is kept there.
  const endpoint = resourceEndpoint(res, {
    async GET(c) {
      const query = parseQuery(def, 'GET', c, c.orderHeader, c.ctx.catalog.lookup, c.ctx.limits);
      const cursor = cursorOf(query.conditions);
      if (cursor) {
        const through = await prunedThrough(c.ctx.database);
        if (through > 0 && cursor.n < through) throw cursorExpired(cursor.text);
      }
      return listReply(c, def, query);
    },
  });
  return { ...endpoint, readsPrimary: true };
}
