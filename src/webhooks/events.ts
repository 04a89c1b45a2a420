// The names of the events (spec §9) and how a webhook's `events` list is read.
import { EVENT_RESOURCES } from '../events/triggers.ts';

export const EVENT_NAMES: readonly string[] = [
  ...EVENT_RESOURCES.flatMap((r) => ['created', 'updated', 'deleted'].map((op) => `${r}.${op}`)),
  'assetqueue.released', 'assetqueue.rejected', 'assets.due', 'assets.overdue',
];
const KNOWN = new Set(EVENT_NAMES);

/** A webhook's `events`: `["*"]` or a non-empty array of known names, without repeats; null when it is neither. */
export function readEventList(value: unknown): string[] | null {
  if (!Array.isArray(value) || value.length === 0 || value.length > KNOWN.size) return null;
  if (value.length === 1 && value[0] === '*') return ['*'];
  if (!value.every((v) => typeof v === 'string' && KNOWN.has(v)) || new Set(value).size !== value.length) return null;
  return value as string[];
}

/** Whether a webhook listening to `list` hears `event`. */
export const hears = (list: readonly string[], event: string) => list[0] === '*' || list.includes(event);
