// What every page file is given, and small helpers for reading forms and queries.
import type { EngineDeps } from '../engine.ts';

export interface PageDeps {
  readonly engine: EngineDeps;
  readonly loginFailuresPerHour: number;
}

/** A text field of a parsed form or query string ('' when absent or repeated). */
export function field(body: unknown, name: string): string {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : '';
}

/** A positive whole number (a record id or a page), else null. */
export function wholeNumber(text: string | undefined): number | null {
  return text !== undefined && /^[1-9]\d{0,14}$/.test(text) ? Number(text) : null;
}
