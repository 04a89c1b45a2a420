// Conditional GET: every GET answer carries a weak ETag over its
// `response` and `pagination` members, and `If-None-Match` with that tag gets 304
// with no body.
import { hash } from 'node:crypto';
import type { Pagination } from './types.ts';

/** `W/"…"`: a hash of the answer's `response` and `pagination` members as sent (one-shot: no Hash object per answer). */
export function etagOf(response: string, pagination: Pagination | undefined): string {
  return `W/"${hash('sha1', `${response}\n${pagination ? JSON.stringify(pagination) : ''}`, 'base64url')}"`;
}

/** `If-None-Match` names the tag (the weak comparison of RFC 9110 §8.8.3.2: `W/` aside), or is `*`. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const mine = opaque(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === mine);
}
