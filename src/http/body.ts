// Request bodies: read with a size limit, then parsed as JSON whatever the
// Content-Type says (the published client labels JSON as a form).
import type { Readable } from 'node:stream';
import { malformedJson, tooLarge } from '../errors.ts';
import { type JsonValue, JsonSyntaxError, parseJson } from '../model/json.ts';

export async function readBody(stream: Readable, declaredLength: string | undefined, max: number): Promise<Buffer> {
  if (declaredLength !== undefined && Number(declaredLength) > max) throw tooLarge(max);
  const chunks: Buffer[] = [];
  let size = 0;
  // Refused mid-way, the request stays whole (a plain `for await` would destroy it, and
  // with it the connection, before the 413 is written); what is left is drained after the answer.
  for await (const chunk of stream.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > max) throw tooLarge(max);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function parseBody(raw: Buffer): JsonValue | undefined {
  if (raw.length === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw malformedJson('invalid UTF-8');
  }
  try {
    return parseJson(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw malformedJson(e.message);
    throw e;
  }
}
