// The links printed on asset labels: `/s/<asset id>-<signature>`, the signature a
// keyed hash of the id under a secret kept in the database (so every instance signs
// and checks alike), cut to 128 bits. Without the secret a link cannot be made up;
// replacing the secret (`labels rotate`) turns every printed link into a missing page.
import { sql } from 'kysely';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { replaceServiceSecret, serviceSecret } from '../db/service-secrets.ts';
import { type Clock, formatDatetime, systemClock } from '../model/dates.ts';

const SECRET_NAME = 'labels';
const TOKEN = /^([1-9]\d{0,14})-([A-Za-z0-9_-]{22})$/;

/** The labels' secret, made (once, by whichever instance asks first) when there is none. */
export const labelSecret = (database: Database, clock: Clock = systemClock): Promise<Buffer> => serviceSecret(database, SECRET_NAME, clock.now());

/** Replaces the labels' secret: every link made before answers 404 from now on. Returns when it was replaced. */
export async function rotateLabelSecret(database: Database, clock: Clock = systemClock): Promise<string> {
  const now = clock.now();
  await replaceServiceSecret(database, SECRET_NAME, now);
  return formatDatetime(now);
}

const signature = (secret: Buffer, assetId: number) =>
  createHmac('sha256', secret).update(`asset status ${assetId}`).digest().subarray(0, 16).toString('base64url');

export const statusToken = (secret: Buffer, assetId: number) => `${assetId}-${signature(secret, assetId)}`;

/** The asset id a token was made for under this secret, or null (malformed, tampered, or made under an old secret). */
export function assetOfToken(secret: Buffer, token: string): number | null {
  const m = TOKEN.exec(token);
  if (!m) return null;
  const id = Number(m[1]);
  const expected = Buffer.from(signature(secret, id));
  const given = Buffer.from(m[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
}

/** What a label's page shows of an asset, to anyone: nothing beyond these. */
export interface PublicStatus {
  readonly assetNo: string;
  readonly description: string;
  readonly status: string;
  readonly nextCheck: string | null;
  readonly lastCheck: string | null;
  readonly lastResult: string | null;
  readonly companyId: number;
  readonly companyName: string;
  /** The company's settings (its reminder window and time zone say what "in date" is). */
  readonly companyData: unknown;
}

interface StatusRow {
  readonly asset_no: string; readonly description: string; readonly status: string; readonly next_check: string | null;
  readonly last_check: string | null; readonly last_result: string | null; readonly company_id: number | string; readonly name: string;
  readonly data: unknown;
}

export async function publicStatus(database: Database, assetId: number): Promise<PublicStatus | null> {
  const { rows: [row] } = await sql<StatusRow>`SELECT a.asset_no, a.description, a.status, a.next_check, a.last_check, a.last_result,
    c.id AS company_id, c.name, c.data FROM assets AS a JOIN companies AS c ON c.id = a.company_id WHERE a.id = ${assetId}`.execute(database.db);
  if (!row) return null;
  const data: unknown = typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
  return {
    assetNo: row.asset_no, description: row.description, status: row.status, nextCheck: row.next_check, lastCheck: row.last_check,
    lastResult: row.last_result, companyId: Number(row.company_id), companyName: row.name, companyData: data,
  };
}
