// The operator's company settings: name, parent, the
// approving certificate and the reminder settings kept in the company's `data`.
// One transaction, one audit entry like an API update's, and the API's own rules
// (resources/companies.ts, with the reasons they give): an approver is a live
// certificate whose scope holds the company, a move closes no cycle and takes no
// company out of its approver's scope. The operator stands above every tree, so
// the top company of a tree can be changed too.
import type { Database } from '../db/database.ts';
import { fieldsJson, insertAudit, recordEntry } from '../engine/audit.ts';
import { AdminError } from '../errors.ts';
import { LOGO_MAX_BYTES, logoDataUrl, subdomainHolder, validSubdomain } from './branding.ts';
import { formatDatetime, systemClock, type Clock } from '../model/dates.ts';
import { JsonNumber, JsonObject, parseJson, stringifyJson } from '../model/json.ts';
import type { Row } from '../model/types.ts';
import { ancestorsOf, companies, managerOf, refuseApprover, refuseMove, refuseSubtreeApprovers } from '../resources/companies.ts';
import { operatorContext } from '../resources/registry.ts';

export const APPROVER_KEY = 'api_assetqueue_manager_id';
/** Reminder windows past ten years are clamped by the reminder run anyway. */
export const MAX_REMINDER_DAYS = 3650;
const NAME_MAX = 1000;

export interface CompanyChanges {
  readonly name?: string;
  readonly parentId?: number;
  /** A certificate id, or null to remove the approver. */
  readonly approver?: number | null;
  readonly reminderDays?: number;
  readonly timeZone?: string;
  /** A PNG or JPEG file's bytes (at most 1 MiB), or null to remove the logo. */
  readonly logo?: Buffer | null;
  /** The portal host label that picks the company, or null to remove it. */
  readonly subdomain?: string | null;
}

/** What the CLI shows of a company: its place in the tree and its settings. */
export interface CompanySettings {
  readonly id: number;
  readonly name: string;
  readonly parent_id: number | null;
  readonly approver: number | null;
  readonly reminder_days: number | null;
  readonly timezone: string | null;
}

/** The IANA name of a time zone in its canonical spelling, or null (offsets such as +01:00 are not names). */
export function canonicalTimeZone(zone: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

export function settingsOf(row: { id: number; name: string; parent_id: number | null; data: string | null }): CompanySettings {
  const data = dataObject(row.data);
  const days = data?.entries.get('reminder_days');
  const zone = data?.entries.get('timezone');
  return {
    id: Number(row.id), name: row.name, parent_id: row.parent_id === null ? null : Number(row.parent_id),
    approver: managerOf(row.data),
    reminder_days: days instanceof JsonNumber && Number.isInteger(days.value) ? days.value : null,
    timezone: typeof zone === 'string' ? zone : null,
  };
}

function dataObject(text: string | null): JsonObject | null {
  if (text === null) return null;
  const v = parseJson(text);
  return v instanceof JsonObject ? v : null;
}

/** Refuses with the rule's reason, when it gives one. */
const refuse = (why: string | null) => { if (why) throw new AdminError(why); };

/** Applies the changes in one transaction with one audit entry; returns the company's settings after it and what changed. */
export async function setCompany(
  database: Database, id: number, changes: CompanyChanges, clock: Clock = systemClock,
): Promise<{ company: CompanySettings; changed: string[] }> {
  if (changes.name !== undefined && (!changes.name.trim() || [...changes.name].length > NAME_MAX)) {
    throw new AdminError(`a company name needs 1 to ${NAME_MAX} characters`);
  }
  if (changes.reminderDays !== undefined && !(Number.isInteger(changes.reminderDays) && changes.reminderDays >= 0
    && changes.reminderDays <= MAX_REMINDER_DAYS)) throw new AdminError(`reminder days must be a whole number from 0 to ${MAX_REMINDER_DAYS}`);
  const zone = changes.timeZone === undefined ? undefined : canonicalTimeZone(changes.timeZone);
  if (zone === null) throw new AdminError(`"${changes.timeZone}" is not an IANA time zone name such as Europe/Berlin`);
  const logo = changes.logo ? logoDataUrl(changes.logo) : changes.logo;
  if (logo === null && changes.logo) throw new AdminError(`a logo must be a PNG or JPEG file of at most ${LOGO_MAX_BYTES} bytes`);
  if (changes.subdomain && !validSubdomain(changes.subdomain)) {
    throw new AdminError('a subdomain needs 1 to 63 lower-case letters, digits and hyphens');
  }
  const now = formatDatetime(clock.now());

  return database.transaction(async (db) => {
    const stored = await db.selectFrom('companies').selectAll().where('id', '=', id).executeTakeFirst();
    if (!stored) throw new AdminError(`company ${id} does not exist`);
    const old: Row = { ...stored, id, parent_id: stored.parent_id === null ? null : Number(stored.parent_id) };
    const next: Row = { ...old };
    if (changes.name !== undefined) next.name = changes.name;
    if (logo !== undefined) next.logo = logo;
    if (changes.subdomain !== undefined) {
      const holder = changes.subdomain === null ? null : await subdomainHolder(db, id, changes.subdomain);
      if (holder !== null) throw new AdminError(`the subdomain ${changes.subdomain} is company ${holder}'s`);
      next.subdomain = changes.subdomain;
    }

    const moves = changes.parentId !== undefined && changes.parentId !== next.parent_id;
    if (moves) {
      const parent = changes.parentId;
      if (!(await db.selectFrom('companies').select('id').where('id', '=', parent).executeTakeFirst())) {
        throw new AdminError(`company ${parent} does not exist`);
      }
      refuse(await refuseMove(db, database.hooks, id, parent));
      next.parent_id = parent;
    }

    if (changes.approver !== undefined || changes.reminderDays !== undefined || zone !== undefined) {
      const data = stored.data === null ? new JsonObject() : dataObject(stored.data);
      if (!data) throw new AdminError(`company ${id} keeps a data value that is not a JSON object; change it through the API`);
      if (changes.approver === null) data.entries.delete(APPROVER_KEY);
      else if (changes.approver !== undefined) {
        const ancestry = [id, ...(next.parent_id === null ? [] : await ancestorsOf(db, Number(next.parent_id)))];
        refuse(await refuseApprover(db, id, changes.approver, ancestry));
        data.entries.set(APPROVER_KEY, new JsonNumber(String(changes.approver)));
      }
      if (changes.reminderDays !== undefined) data.entries.set('reminder_days', new JsonNumber(String(changes.reminderDays)));
      if (zone !== undefined) data.entries.set('timezone', zone);
      next.data = data.entries.size === 0 ? null : stringifyJson(data);
    }

    const changed = companies.def.fields.filter((f) => ['name', 'logo', 'subdomain', 'parent_id', 'data'].includes(f.name)
      && next[f.name] !== old[f.name]);
    if (changed.length > 0) {
      next.modified = now;
      await db.updateTable('companies').set({ name: String(next.name), parent_id: next.parent_id as number | null,
        data: next.data as string | null, logo: next.logo as string | null, subdomain: next.subdomain as string | null, modified: now })
        .where('id', '=', id).execute();
      if (moves) refuse(await refuseSubtreeApprovers(db, id));
      // A logo is up to 1 MiB of image: the audit log notes its size, not its bytes.
      const noted = (r: Row): Row => ({ ...r, logo: typeof r.logo === 'string' ? `(an image, ${r.logo.length} characters of data URL)` : null });
      const entry = recordEntry(companies.def, 'update', next, fieldsJson(changed, noted(old)), fieldsJson(changed, noted(next)));
      await insertAudit(operatorContext(database, id, clock), db, now, [entry]);
    }
    const company = settingsOf({ id, name: String(next.name), parent_id: next.parent_id as number | null, data: next.data as string | null });
    return { company, changed: changed.map((f) => f.name) };
  });
}

/** Every company with its settings, in tree order (each root, then its subtree), with its depth. */
export async function companyTree(database: Database): Promise<(CompanySettings & { depth: number })[]> {
  const rows = await database.db.selectFrom('companies').select(['id', 'name', 'parent_id', 'data']).orderBy('id').execute();
  const children = new Map<number | null, typeof rows>();
  const ids = new Set(rows.map((r) => Number(r.id)));
  for (const r of rows) {
    // A parent outside the table cannot happen (foreign key); shown as a root should it ever.
    const parent = r.parent_id !== null && ids.has(Number(r.parent_id)) ? Number(r.parent_id) : null;
    const siblings = children.get(parent);
    if (siblings) siblings.push(r);
    else children.set(parent, [r]);
  }
  const out: (CompanySettings & { depth: number })[] = [];
  const walk = (parent: number | null, depth: number) => {
    for (const r of children.get(parent) ?? []) {
      out.push({ ...settingsOf(r), depth });
      walk(Number(r.id), depth + 1);
    }
  };
  walk(null, 0);
  return out;
}
