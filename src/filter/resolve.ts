// Names in filters and ordering are resolved against the endpoint's declared
// fields and relations, never used as SQL text.
import type { FieldDef, Lookup, RelationDef, ResourceDef } from '../model/types.ts';

/** A single-valued field reachable from a record: own, through a relation, or inside JSON. */
export interface FieldRef {
  /** The relation the field is reached through (one-to-one, or through a link table), or null for an own field. */
  readonly relation: RelationDef | null;
  readonly resource: ResourceDef;
  readonly field: FieldDef;
  /** Keys into a JSON field; empty for a plain field. */
  readonly keys: readonly string[];
}

const JSON_KEY = /^[A-Za-z0-9_$]+$/;

export const fieldOf = (def: ResourceDef, name: string) => def.fields.find((f) => f.name === name);

/** Fields a relation exposes: its own list (the asset short form) or the target's fields. */
export function relationFields(rel: RelationDef, target: ResourceDef): readonly FieldDef[] {
  if (!rel.fields) return target.fields;
  return rel.fields.map((n) => {
    const f = fieldOf(target, n);
    if (!f) throw new Error(`relation ${rel.name}: ${target.name} has no field ${n}`);
    return f;
  });
}

function refInto(resource: ResourceDef, fields: readonly FieldDef[], relation: RelationDef | null, parts: readonly string[]): FieldRef | null {
  const [head, ...keys] = parts;
  const field = fields.find((f) => f.name === head);
  if (!field) return null;
  if (keys.length === 0) return { relation, resource, field, keys };
  if (field.type !== 'json' || !keys.every((k) => JSON_KEY.test(k))) return null;
  return { relation, resource, field, keys };
}

/** `field`, `<endpoint>.field`, `relation.field`, and JSON paths below any of them. */
export function resolveField(def: ResourceDef, name: string, lookup: Lookup, forOrder = false): FieldRef | null {
  const parts = name.split('.');
  if (parts.some((p) => p === '')) return null;
  if (parts.length > 1 && parts[0] === def.name && fieldOf(def, parts[1]!)) parts.shift();
  const own = refInto(def, def.fields, null, parts);
  if (own) return own;
  const rel = def.relations.find((r) => r.name === parts[0]);
  if (!rel || rel.back || parts.length < 2) return null;
  if (rel.through && forOrder) return null;
  const target = lookup(rel.resource);
  return refInto(target, relationFields(rel, target), rel, parts.slice(1));
}

/**
 * Ordering also accepts a bare name that only an embedded record has: it means
 * that record's field when exactly one relation has it.
 */
export function resolveOrderField(def: ResourceDef, name: string, lookup: Lookup): FieldRef | null {
  const direct = resolveField(def, name, lookup, true);
  if (direct || name.includes('.')) return direct;
  const found: FieldRef[] = [];
  for (const rel of def.relations) {
    if (rel.back || rel.through) continue;
    const target = lookup(rel.resource);
    const ref = refInto(target, relationFields(rel, target), rel, [name]);
    if (ref) found.push(ref);
  }
  return found.length === 1 ? found[0]! : null;
}
