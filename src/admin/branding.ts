// A company's look on the portal, picked by the host a browser asked for: the
// company whose subdomain is the host's first label (case-insensitive). Colours
// are taken only when they are `#rgb` or `#rrggbb`, so nothing else a company
// stored can reach a stylesheet; the logo only when it is a PNG or JPEG.
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { JsonObject, parseJson } from '../model/json.ts';
import { type Logo, logoOf } from '../model/logo.ts';

export interface Brand {
  readonly companyId: number;
  readonly name: string;
  readonly primary: string | null;
  readonly accent: string | null;
  readonly logo: Logo | null;
}

const COLOUR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const LABEL = /^[a-z0-9-]{1,63}$/;

/** The first label of a host that names a company, or null (an address, a bare name such as localhost). */
export function subdomainOf(host: string | undefined): string | null {
  const name = (host ?? '').toLowerCase().replace(/:\d+$/, '');
  if (name.startsWith('[') || /^[0-9.]+$/.test(name)) return null;
  const dot = name.indexOf('.');
  if (dot <= 0 || dot === name.length - 1) return null;
  const label = name.slice(0, dot);
  return LABEL.test(label) ? label : null;
}

const colour = (styles: JsonObject | null, key: string): string | null => {
  const v = styles?.entries.get(key);
  return typeof v === 'string' && COLOUR.test(v) ? v.toLowerCase() : null;
};

export async function brandOf(database: Database, host: string | undefined): Promise<Brand | null> {
  const label = subdomainOf(host);
  if (label === null) return null;
  const row = await database.db.selectFrom('companies').select(['id', 'name', 'styles', 'logo'])
    .where(sql<string>`lower(subdomain)`, '=', label).executeTakeFirst();
  if (!row) return null;
  const parsed = row.styles ? parseJson(row.styles) : null;
  const styles = parsed instanceof JsonObject ? parsed : null;
  return { companyId: Number(row.id), name: row.name, primary: colour(styles, 'primary_color'), accent: colour(styles, 'accent_color'),
    logo: logoOf(row.logo) };
}

/** The user's company is the brand's company or one of its descendants. */
export async function belongsTo(database: Database, userCompanyId: number, brandCompanyId: number): Promise<boolean> {
  const { rows } = await sql`SELECT 1 FROM company_closure WHERE ancestor_id = ${brandCompanyId} AND descendant_id = ${userCompanyId}`
    .execute(database.db);
  return rows.length > 0;
}

export const LOGO_MAX_BYTES = 1024 * 1024;

/** A PNG or JPEG file's bytes as the data URL a company keeps as its logo; null for anything else or a file over 1 MiB. */
export function logoDataUrl(bytes: Buffer): string | null {
  if (bytes.length === 0 || bytes.length > LOGO_MAX_BYTES) return null;
  const png = bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const jpeg = bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  return png || jpeg ? `data:image/${png ? 'png' : 'jpeg'};base64,${bytes.toString('base64')}` : null;
}

/** A subdomain the portal can match: one DNS label of lower-case letters, digits and hyphens. */
export const validSubdomain = (name: string) => LABEL.test(name);

/** The company other than `id` that already answers to `name` (case-insensitive), if any. */
export async function subdomainHolder(db: Database['db'], id: number, name: string): Promise<number | null> {
  const row = await db.selectFrom('companies').select('id').where(sql<string>`lower(subdomain)`, '=', name.toLowerCase())
    .where('id', '<>', id).executeTakeFirst();
  return row ? Number(row.id) : null;
}
