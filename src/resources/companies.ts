// Companies form the tenancy tree. A certificate or session sees its
// company and every descendant; the top of that scope is protected.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { SqlDialect } from '../model/dialect.ts';
import { dataError, invalidValue } from '../errors.ts';
import { JsonNumber, memberOf, parseJson, stringifyJson } from '../model/json.ts';
import type { Row, SqlValue } from '../model/types.ts';
import { ADMIN_WRITES, ALL_VERBS, data, embed, id, modified, version } from './fields.ts';
import type { Resource, WriteTx } from '../engine/types.ts';

const MANAGER = 'api_assetqueue_manager_id';

/** The approving system's certificate id named in a company's `data`, if any. */
export function managerOf(companyData: SqlValue | undefined): number | null {
  if (typeof companyData !== 'string') return null;
  const v = parseJson(companyData);
  const m = memberOf(v, MANAGER);
  return m instanceof JsonNumber && Number.isSafeInteger(m.value) ? m.value : null;
}

/** The raw JSON text of the manager key, to tell whether a change touches it (`5` and `"5"` differ). */
function managerText(companyData: SqlValue | undefined): string | null {
  if (typeof companyData !== 'string') return null;
  const v = parseJson(companyData);
  const m = memberOf(v, MANAGER);
  return m === undefined ? null : stringifyJson(m);
}

/** The company and all its ancestors, nearest first. */
export async function ancestorsOf(db: Db, companyIdValue: number): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`SELECT ancestor_id AS id FROM company_closure
    WHERE descendant_id = ${companyIdValue} ORDER BY depth`.execute(db);
  return rows.map((r) => Number(r.id));
}

// The rules of the tree, written once for the API's hooks below and the operator's
// `company set` (admin/company.ts): each says why a change is refused, or null.

/** Why certificate `clientId` cannot approve for the company whose ancestry (itself first) is given, or null. */
export async function refuseApprover(db: Db, companyId: number, clientId: number, ancestry: readonly number[]): Promise<string | null> {
  const client = await db.selectFrom('clients').select(['company_id', 'revoked']).where('id', '=', clientId).executeTakeFirst();
  if (!client) return `certificate ${clientId} does not exist (see client list)`;
  if (client.revoked) return `certificate ${clientId} was revoked on ${client.revoked} and cannot approve`;
  if (!ancestry.includes(Number(client.company_id))) {
    return `certificate ${clientId} belongs to company ${client.company_id}, whose scope does not hold company ${companyId}:`
      + ' an approver must be registered to the company or one of its ancestors';
  }
  return null;
}

/** Why company `id` cannot move under `parent` (it would close a cycle), or null; moves take turns across instances first. */
export async function refuseMove(db: Db, hooks: SqlDialect, id: number, parent: number): Promise<string | null> {
  // Two concurrent moves could otherwise close a cycle.
  await hooks.lockFor('companies.tree').execute(db);
  if ((await ancestorsOf(db, parent)).includes(id)) return `company ${parent} is company ${id} or below it: the move would make a cycle`;
  return null;
}

/** After a move: why a company of the moved subtree is no longer in its approver's scope, or null. */
export async function refuseSubtreeApprovers(db: Db, companyId: number): Promise<string | null> {
  const { rows } = await sql<{ id: number; data: SqlValue }>`SELECT c.id, c.data FROM companies c
    JOIN company_closure cc ON cc.descendant_id = c.id WHERE cc.ancestor_id = ${companyId} ORDER BY c.id`.execute(db);
  for (const r of rows) {
    const approver = managerOf(r.data);
    if (approver === null) continue;
    const why = await refuseApprover(db, Number(r.id), approver, await ancestorsOf(db, Number(r.id)));
    if (why) return `the move would take company ${r.id} out of the scope of its approving certificate ${approver}`;
  }
  return null;
}

/** A manager id must name a live certificate whose scope contains the company. */
async function checkManager(tx: WriteTx, companyId: number, companyData: SqlValue | undefined, ancestry: readonly number[]): Promise<void> {
  if (managerText(companyData) === null) return;
  const manager = managerOf(companyData);
  if (manager === null || (await refuseApprover(tx.db, companyId, manager, ancestry))) throw invalidValue('data');
}

async function beforeCreate(tx: WriteTx, record: Row): Promise<void> {
  if (record.parent_id === undefined) record.parent_id = tx.ctx.principal.companyId;
  if (record.parent_id === null) throw invalidValue('parent_id');
  await checkManager(tx, 0, record.data, await ancestorsOf(tx.db, Number(record.parent_id)));
}

async function beforeUpdate(tx: WriteTx, old: Row, changes: Row): Promise<void> {
  const isTop = old.id === tx.ctx.principal.companyId;
  const parentChanges = changes.parent_id !== undefined && changes.parent_id !== old.parent_id;
  if (parentChanges) {
    if (isTop || changes.parent_id === null) throw invalidValue('parent_id');
    if (await refuseMove(tx.db, tx.ctx.database.hooks, Number(old.id), Number(changes.parent_id))) throw invalidValue('parent_id');
  }
  const managerChanges = changes.data !== undefined && managerText(changes.data) !== managerText(old.data);
  if (managerChanges) {
    if (isTop) throw invalidValue('data');
    const parent = changes.parent_id !== undefined ? changes.parent_id : old.parent_id;
    await checkManager(tx, Number(old.id), changes.data, [Number(old.id), ...(parent === null ? [] : await ancestorsOf(tx.db, Number(parent)))]);
  }
}

/** A move may not take the company, or any company below it, out of its approving system's scope. */
async function afterUpdate(tx: WriteTx, old: Row, next: Row): Promise<void> {
  if (next.parent_id !== old.parent_id && (await refuseSubtreeApprovers(tx.db, Number(old.id)))) throw invalidValue('parent_id');
}

/**
 * The top of the scope stays. The log of a deleted company — its deletion included —
 * passes to its nearest ancestor that stays, so whoever could see the company can still read it.
 */
async function beforeDelete(tx: WriteTx, rows: readonly Row[]): Promise<void> {
  const top = rows.find((r) => r.id === tx.ctx.principal.companyId);
  if (top) throw dataError(`companies record ${top.id} is the top of your scope and cannot be deleted`);
  const parentOf = new Map(rows.map((r) => [Number(r.id), r.parent_id === null ? null : Number(r.parent_id)]));
  const heirs = new Map<number, number>();
  for (const id of parentOf.keys()) {
    let heir = parentOf.get(id) ?? null;
    while (heir !== null && parentOf.has(heir)) heir = parentOf.get(heir) ?? null;
    if (heir !== null) heirs.set(id, heir);
  }
  tx.passAudit(heirs);
}

/** A manager id, when given, is an integer. */
function validate(_ctx: unknown, values: Row): void {
  if (managerText(values.data) !== null && managerOf(values.data) === null) throw invalidValue('data');
}

export const companies: Resource = {
  def: {
    name: 'companies', table: 'companies', verbs: ALL_VERBS, scopeColumn: 'id', access: { ...ADMIN_WRITES, PUT: 'creator' },
    fields: [
      id,
      { name: 'name', type: 'string', writable: 'always', required: true },
      { name: 'created', type: 'datetime', default: 'now' },
      { name: 'logo', type: 'string', nullable: true, writable: 'always' },
      { name: 'subdomain', type: 'string', nullable: true, writable: 'always' },
      { name: 'styles', type: 'json', nullable: true, writable: 'always', objectOnly: true },
      data,
      { name: 'parent_id', type: 'int', nullable: true, writable: 'always', references: { resource: 'companies', rule: 'in-scope', onDelete: 'restrict' } },
      modified, version,
    ],
    relations: [embed('parentcompany', 'companies', 'parent_id')],
    events: {},
    unique: [['subdomain']],
  },
  hooks: { validate, beforeCreate, beforeUpdate, afterUpdate, beforeDelete },
};
