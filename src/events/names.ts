// The names of the events and how a webhook's `events` list is read.
import type { Catalog, ResourceDef } from '../model/types.ts';
import { eventResources } from './triggers.ts';

/** The events of a resource's records: created, updated, deleted and those of its own (`assets.due`, `assetqueue.released` …). */
const namesOf = (def: ResourceDef): string[] => [
  'created', 'updated', 'deleted', ...(def.events?.transitions ?? []).map((t) => t.kind.op), ...(def.events?.notices ?? []),
].map((op) => `${def.name}.${op}`);

export const eventNames = (catalog: Catalog): string[] => eventResources(catalog).flatMap(namesOf);

const known = new WeakMap<Catalog, ReadonlySet<string>>();
/** The event names of a catalog, as a set (made once per catalog). */
export function knownEvents(catalog: Catalog): ReadonlySet<string> {
  let names = known.get(catalog);
  if (!names) known.set(catalog, (names = new Set(eventNames(catalog))));
  return names;
}

/** A webhook's `events`: `["*"]` or a non-empty array of known names, without repeats; null when it is neither. */
export function readEventList(value: unknown, known: ReadonlySet<string>): string[] | null {
  if (!Array.isArray(value) || value.length === 0 || value.length > known.size) return null;
  if (value.length === 1 && value[0] === '*') return ['*'];
  if (!value.every((v) => typeof v === 'string' && known.has(v)) || new Set(value).size !== value.length) return null;
  return value as string[];
}

/** Whether a webhook listening to `list` hears `event`. */
export const hears = (list: readonly string[], event: string) => list[0] === '*' || list.includes(event);
