// A query as a shape plus values: the conditions with their values replaced by
// Params (c0, c0n, …), the key that names the shape, and the values to bind.
// Field references, operators and value kinds make the key; values never do.
import { Param } from '../db/statements.ts';
import type { Condition, Typed } from '../filter/compile.ts';
import type { OrderTerm } from '../filter/order.ts';
import type { FieldRef } from '../filter/resolve.ts';
import { merged } from '../model/merged.ts';
import type { Query, QueryShape } from './types.ts';

const refKey = (r: FieldRef) => [r.relation?.name ?? '', r.field.name, ...r.keys].join('.');

function slotted(v: Typed, at: (suffix: string, value: unknown) => Param): { value: Typed; kind: string } {
  switch (v.kind) {
    case 'null': return { value: v, kind: 'null' };
    case 'scalar': return { value: { kind: 'scalar', value: at('', v.value) }, kind: 'scalar' };
    case 'day': return { value: { kind: 'day', day: at('', v.day), next: at('n', v.next) }, kind: 'day' };
    case 'contains': return { value: { kind: 'contains', needle: at('', v.needle) }, kind: 'contains' };
    case 'json': return {
      value: { kind: 'json', text: at('', v.text), number: v.number === null ? null : at('n', v.number) },
      kind: v.number === null ? 'json-text' : 'json-number',
    };
  }
}

export const orderKey = (order: readonly OrderTerm[]) => order.map((t) => `${refKey(t.ref)}${t.descending ? '^' : ''}`).join(',');

export function queryShape(query: Query): QueryShape {
  const values: Record<string, unknown> = {};
  const keys: string[] = [];
  /** One condition with its values as the params `<name>`, `<name>n`; its key. */
  const slot = (c: Condition, name: string): { condition: Condition; key: string } => {
    const at = (suffix: string, value: unknown) => {
      values[`${name}${suffix}`] = value;
      return new Param(`${name}${suffix}`);
    };
    const { value, kind } = slotted(c.value, at);
    return { condition: merged(c, { value }), key: `${refKey(c.ref)}${c.segment.op}${kind}` };
  };
  const conditions = query.conditions.map((c, i) => {
    const own = slot(c, `c${i}`);
    if (!c.orElse) {
      keys.push(own.key);
      return own.condition;
    }
    const others = c.orElse.map((o, j) => slot(o, `c${i}o${j}`));
    keys.push(`(${[own.key, ...others.map((o) => o.key)].join('/')})`);
    return merged(own.condition, { orElse: others.map((o) => o.condition) });
  });
  return { where: keys.join('|'), order: orderKey(query.order), conditions, values };
}

/** The query can match one record at most: it names an id of the endpoint's own records. */
export const byId = (query: Query) => query.conditions.some((c) =>
  !c.orElse && !c.ref.relation && c.ref.field.name === 'id' && c.ref.keys.length === 0 && c.segment.op === '=' && c.value.kind === 'scalar');
