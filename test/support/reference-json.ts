// A plain reference serializer for GET responses, kept apart from the service's
// own (which has the database write the JSON): it reads the raw rows with
// `SELECT *` and writes every record in JS, the way the service once did —
// fields in the contract's order (int/bool → digits, JSON columns → the stored
// text verbatim, every other value → JSON.stringify, NULL → null), then each
// one-to-one embed (null, or all members null when the reference is empty or
// the record lies outside the caller's scope), then the one-to-many embeds (an
// asset's files in id order, only those in scope), then the version (an embedded
// record has it as its last field). The scope is a recursive walk
// over `companies.parent_id` from the caller's company. Basic mode only (no
// session): messages and auditlog then have no further visibility rules.
import { inspect } from 'node:util';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import {
  ASSET_FIELDS, ASSET_SHORT, AUDIT_FIELDS, COMPANY_FIELDS, EXTERNALTYPE_FIELDS, FILE_FIELDS, MESSAGE_FIELDS, PLACE_FIELDS, QUEUE_FIELDS,
  USER_FIELDS,
} from '../http/resources-support.ts';

export type ResourceName = 'assets' | 'companies' | 'locations' | 'departments' | 'externaltypes' | 'users' | 'messages' | 'files'
  | 'assetreminders' | 'assetqueue' | 'auditlog';

export type RawRow = Record<string, unknown>;

interface OneEmbed {
  readonly name: string;
  readonly resource: ResourceName;
  readonly via: string;
  readonly empty: 'null' | 'nulls';
  /** The embedded fields when not the target's own list (the asset short form). */
  readonly fields?: readonly string[];
}

interface ManyEmbed { readonly name: string; readonly resource: ResourceName; readonly back: string }

interface Spec {
  readonly table: string;
  readonly fields: readonly string[];
  /** Columns holding dynamic JSON text, written verbatim. */
  readonly json: ReadonlySet<string>;
  /** The column that places a record in a company. */
  readonly scope: string;
  readonly one: readonly OneEmbed[];
  readonly many: readonly ManyEmbed[];
}

export const REMINDER_FIELDS = ['id', 'company_id', 'asset_id', 'user_id', 'due_date', 'remind_date', 'message', 'sent', 'acknowledged', 'data'];

const company: OneEmbed = { name: 'company', resource: 'companies', via: 'company_id', empty: 'null' };
const place = (table: string): Spec =>
  ({ table, fields: PLACE_FIELDS, json: new Set(['data']), scope: 'company_id', one: [company], many: [] });

export const SPECS: Readonly<Record<ResourceName, Spec>> = {
  assets: {
    table: 'assets', fields: ASSET_FIELDS, json: new Set(['data']), scope: 'company_id',
    one: [company, { name: 'location', resource: 'locations', via: 'location_id', empty: 'null' },
      { name: 'department', resource: 'departments', via: 'department_id', empty: 'null' },
      { name: 'externaltype', resource: 'externaltypes', via: 'external_type_id', empty: 'nulls' }],
    many: [{ name: 'files', resource: 'files', back: 'asset_id' }],
  },
  companies: {
    table: 'companies', fields: COMPANY_FIELDS, json: new Set(['styles', 'data']), scope: 'id',
    one: [{ name: 'parentcompany', resource: 'companies', via: 'parent_id', empty: 'null' }], many: [],
  },
  locations: place('locations'),
  departments: place('departments'),
  externaltypes: { table: 'externaltypes', fields: EXTERNALTYPE_FIELDS, json: new Set(['data']), scope: 'company_id', one: [], many: [] },
  users: { table: 'users', fields: USER_FIELDS, json: new Set(['permissions', 'data']), scope: 'company_id', one: [company], many: [] },
  messages: {
    table: 'messages', fields: MESSAGE_FIELDS, json: new Set(['data']), scope: 'company_id',
    one: [{ name: 'sender', resource: 'users', via: 'sender_user_id', empty: 'null' },
      { name: 'recipient', resource: 'users', via: 'target_user_id', empty: 'null' }],
    many: [],
  },
  files: {
    table: 'files', fields: FILE_FIELDS, json: new Set(['data']), scope: 'company_id',
    one: [{ name: 'asset', resource: 'assets', via: 'asset_id', empty: 'null', fields: ASSET_SHORT }, company], many: [],
  },
  assetreminders: {
    table: 'assetreminders', fields: REMINDER_FIELDS, json: new Set(['data']), scope: 'company_id',
    one: [{ name: 'asset', resource: 'assets', via: 'asset_id', empty: 'null', fields: ASSET_SHORT },
      { name: 'user', resource: 'users', via: 'user_id', empty: 'null' }],
    many: [],
  },
  assetqueue: {
    table: 'assetqueue', fields: QUEUE_FIELDS, json: new Set(['data']), scope: 'company_id',
    one: [company, { name: 'externaltype', resource: 'externaltypes', via: 'external_type_id', empty: 'nulls' },
      { name: 'department', resource: 'departments', via: 'department_id', empty: 'null' },
      { name: 'location', resource: 'locations', via: 'location_id', empty: 'null' }],
    many: [],
  },
  auditlog: {
    table: 'auditlog', fields: AUDIT_FIELDS, json: new Set(['olddata', 'newdata']), scope: 'company_id',
    one: [{ name: 'asset', resource: 'assets', via: 'asset_id', empty: 'null', fields: ASSET_SHORT }, company,
      { name: 'user', resource: 'users', via: 'user_id', empty: 'null' }, { name: 'file', resource: 'files', via: 'file_id', empty: 'null' }],
    many: [],
  },
};

/** One value as JSON text, as JSON.stringify writes it (JSON columns as stored). */
export function valueJson(v: unknown, json: boolean, where: string): string {
  if (v === null) return 'null';
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new Error(`reference: ${where} holds the non-integer ${v}`);
    return String(v);
  }
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'string') return json ? v : JSON.stringify(v);
  throw new Error(`reference: ${where} holds ${typeof v} ${inspect(v)} (a column missing from SELECT *?)`);
}

const nullsJson = (fields: readonly string[]) => `{${fields.map((f) => `${JSON.stringify(f)}:null`).join(',')}}`;

const idOf = (row: RawRow) => Number(row.id);

/** What the caller is: basic mode on the certificate of company `root`. */
export interface Caller { readonly root: number }

export class ReferenceSerializer {
  constructor(private readonly db: Db, private readonly baseUrl: string) {}

  /** The caller's company and every company below it, by a walk over `companies.parent_id`. */
  async scope(root: number): Promise<Set<number>> {
    const { rows } = await sql<{ id: unknown; parent_id: unknown }>`SELECT id, parent_id FROM companies`.execute(this.db);
    const children = new Map<number, number[]>();
    for (const r of rows) {
      if (r.parent_id === null) continue;
      const p = Number(r.parent_id);
      children.set(p, [...(children.get(p) ?? []), Number(r.id)]);
    }
    const out = new Set<number>();
    const todo = rows.some((r) => Number(r.id) === root) ? [root] : [];
    while (todo.length > 0) {
      const id = todo.pop()!;
      if (out.has(id)) throw new Error(`reference: the company tree has a cycle through ${id}`);
      out.add(id);
      todo.push(...(children.get(id) ?? []));
    }
    return out;
  }

  /** Every row of a resource's table (for counting matches in JS). */
  async all(resource: ResourceName): Promise<RawRow[]> {
    const { rows } = await sql<RawRow>`SELECT * FROM ${sql.table(SPECS[resource].table)} ORDER BY id`.execute(this.db);
    return rows;
  }

  private async byIds(table: string, ids: readonly number[]): Promise<Map<number, RawRow>> {
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) return new Map();
    const { rows } = await sql<RawRow>`SELECT * FROM ${sql.table(table)} WHERE id IN (${sql.join(wanted)})`.execute(this.db);
    return new Map(rows.map((r) => [idOf(r), r]));
  }

  /** `message_read` in basic mode: the row's own for a message to a user; for one to a company, 1 once every user of it has read it. */
  private async messageRead(rows: readonly RawRow[]): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    const companyWide = rows.filter((r) => r.target_user_id === null);
    for (const r of rows) if (r.target_user_id !== null) out.set(idOf(r), Number(r.message_read));
    if (companyWide.length === 0) return out;
    const users = (await sql<{ id: unknown; company_id: unknown }>`SELECT id, company_id FROM users`.execute(this.db)).rows;
    const reads = (await sql<{ message_id: unknown; user_id: unknown }>`SELECT message_id, user_id FROM message_reads
      WHERE message_id IN (${sql.join(companyWide.map(idOf))})`.execute(this.db)).rows;
    const read = new Set(reads.map((r) => `${Number(r.message_id)}/${Number(r.user_id)}`));
    for (const m of companyWide) {
      const unread = users.some((u) => Number(u.company_id) === Number(m.company_id) && !read.has(`${idOf(m)}/${Number(u.id)}`));
      out.set(idOf(m), unread ? 0 : 1);
    }
    return out;
  }

  /** The fields of `row` as a JSON object in the order of `fields`. */
  private async objectJson(resource: ResourceName, row: RawRow, fields: readonly string[]): Promise<string> {
    const spec = SPECS[resource];
    const parts: string[] = [];
    for (const f of fields) {
      let text: string;
      if (resource === 'files' && f === 'upload_endpoint') text = JSON.stringify(`${this.baseUrl}/3.0/upload/${String(row.token)}`);
      else if (resource === 'messages' && f === 'message_read') text = String((await this.messageRead([row])).get(idOf(row)));
      else {
        if (!(f in row)) throw new Error(`reference: ${spec.table} has no column ${f}`);
        text = valueJson(row[f], spec.json.has(f), `${spec.table}.${f} of record ${idOf(row)}`);
      }
      parts.push(`${JSON.stringify(f)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  }

  /**
   * The exact `response` text of a GET whose page holds the records `ids` (in
   * this order) of `resource`, for a basic-mode caller at company `root`.
   */
  async response(resource: ResourceName, ids: readonly number[], caller: Caller): Promise<string> {
    const spec = SPECS[resource];
    const scope = await this.scope(caller.root);
    const rows = await this.byIds(spec.table, ids);
    const records: string[] = [];
    for (const id of ids) {
      const row = rows.get(id);
      if (!row) throw new Error(`reference: ${spec.table} has no record ${id}`);
      const own = spec.fields.filter((f) => f !== 'version');
      const members = [(await this.objectJson(resource, row, own)).slice(1, -1)];
      for (const rel of spec.one) {
        const target = SPECS[rel.resource];
        const fields = rel.fields ?? target.fields;
        const via = row[rel.via];
        if (via === undefined) throw new Error(`reference: ${spec.table} has no column ${rel.via}`);
        let text: string;
        if (via === null) text = rel.empty === 'nulls' ? nullsJson(fields) : 'null';
        else {
          const found = (await this.byIds(target.table, [Number(via)])).get(Number(via));
          text = found && scope.has(Number(found[target.scope])) ? await this.objectJson(rel.resource, found, fields) : nullsJson(fields);
        }
        members.push(`${JSON.stringify(rel.name)}:${text}`);
      }
      for (const rel of spec.many) {
        const target = SPECS[rel.resource];
        const { rows: children } = await sql<RawRow>`SELECT * FROM ${sql.table(target.table)} WHERE ${sql.ref(rel.back)} = ${id}
          ORDER BY id`.execute(this.db);
        const items: string[] = [];
        for (const c of children) if (scope.has(Number(c[target.scope]))) items.push(await this.objectJson(rel.resource, c, target.fields));
        members.push(`${JSON.stringify(rel.name)}:[${items.join(',')}]`);
      }
      // The version comes last, after the embeds.
      if (own.length < spec.fields.length) members.push((await this.objectJson(resource, row, ['version'])).slice(1, -1));
      records.push(`{${members.filter((m) => m !== '').join(',')}}`);
    }
    return `[${records.join(',')}]`;
  }
}

/** A stored cell as text, as String() writes it; a cell of another kind (a plain object) is a mistake of the test. */
export function cellText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  if (v instanceof Date || Buffer.isBuffer(v)) return v.toString();
  throw new Error(`a cell that is no scalar: ${inspect(v)}`);
}
