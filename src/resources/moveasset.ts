// POST /3.0/moveasset {"asset_id": N, "company_id": M} moves an asset, with its
// files and reminders, to another company in scope. References to
// the old company's location, department and external type are cleared.
import { sql } from 'kysely';
import { bodyObjects, readFields } from '../engine/body.ts';
import { listRecords, readerOf } from '../engine/list.ts';
import { parseQuery, pathFilters } from '../engine/query.ts';
import { clearReference, removeRecords } from '../engine/remove.ts';
import { updateRecord } from '../engine/update.ts';
import { checkPrecondition, readIfMatch } from '../engine/precondition.ts';
import { byIds, inWriteTx, matchIds } from '../engine/write.ts';
import { invalidFilter, invalidValue } from '../errors.ts';
import type { ResourceDef, Row } from '../model/types.ts';
import { assetqueue } from './assetqueue.ts';
import { assetreminders } from './assetreminders.ts';
import { assets } from './assets.ts';
import { files } from './files.ts';
import type { Endpoint, Resource, WriteTx } from '../engine/types.ts';

const moveDef: ResourceDef = {
  name: 'moveasset', table: 'assets', verbs: ['POST'], scopeColumn: 'company_id', relations: [],
  access: { GET: 'creator', POST: 'creator', PUT: 'creator', DELETE: 'creator' },
  fields: [
    { name: 'asset_id', type: 'int', writable: 'always', required: true },
    { name: 'company_id', type: 'int', writable: 'always', required: true },
  ],
};

const CLEARED = ['location_id', 'department_id', 'external_type_id'] as const;

const recordsOf = async (tx: WriteTx, res: Resource, assetId: number): Promise<Row[]> =>
  (await sql<Row>`SELECT * FROM ${sql.table(res.def.table)} WHERE asset_id = ${assetId} ORDER BY id`.execute(tx.db)).rows;

async function carryFiles(tx: WriteTx, assetId: number, companyId: number): Promise<void> {
  for (const row of await recordsOf(tx, files, assetId)) await updateRecord(tx, files, row, { company_id: companyId });
}

/**
 * A reminder addressed to a user (of the old company) goes to everyone of the new
 * company who takes reminders — unless the asset already has such a reminder for
 * that due date, which then stands for it and the personal one is removed.
 */
async function carryReminders(tx: WriteTx, assetId: number, companyId: number): Promise<void> {
  const rows = await recordsOf(tx, assetreminders, assetId);
  const companyWide = new Set(rows.filter((r) => r.user_id === null).map((r) => String(r.due_date)));
  const merged: Row[] = [];
  for (const row of rows) {
    const personal = row.user_id !== null;
    if (personal && companyWide.has(String(row.due_date))) {
      merged.push(row);
      continue;
    }
    if (personal) companyWide.add(String(row.due_date));
    await updateRecord(tx, assetreminders, row, personal ? { company_id: companyId, user_id: null } : { company_id: companyId });
  }
  await removeRecords(tx, assetreminders, merged.map((r) => Number(r.id)));
}

export const moveassetEndpoint: Endpoint = {
  name: 'moveasset',
  access: moveDef.access,
  handlers: {
    async POST(c) {
      const { ctx } = c;
      if (c.segments.length > 0) throw invalidFilter(c.segments[0]!);
      const [body] = bodyObjects(c.json(), 'POST');
      const given = readFields(moveDef, body!, 'update', ctx.limits);
      if (given.asset_id === undefined || given.asset_id === null) throw invalidValue('asset_id');
      if (given.company_id === undefined || given.company_id === null) throw invalidValue('company_id');
      const assetId = Number(given.asset_id);
      const companyId = Number(given.company_id);
      const moved = parseQuery(assets.def, 'GET', pathFilters(`id=${assetId}`), undefined, ctx.catalog.lookup, ctx.limits);
      const pre = readIfMatch(c.ifMatch);
      return inWriteTx(ctx, async (tx) => {
        const asset = await tx.find(assets.def, assetId);
        if (!asset) throw invalidValue('asset_id');
        if (!(await tx.find(ctx.catalog.lookup('companies'), companyId))) throw invalidValue('company_id');
        // The moved asset is the record If-Match speaks of (locked, as a POST's matched records are).
        if (pre) await checkPrecondition(tx, assets.def, moved, byIds(tx, await matchIds(tx, assets.def, moved)), pre);
        if (asset.company_id !== companyId) {
          const changes: Row = { company_id: companyId };
          for (const k of CLEARED) if (asset[k] !== null) changes[k] = null;
          await updateRecord(tx, assets, asset, changes);
          await carryFiles(tx, assetId, companyId);
          await carryReminders(tx, assetId, companyId);
          // A queue entry stays with its company; it no longer names an asset of another one.
          const queued = (await recordsOf(tx, assetqueue, assetId)).map((r) => Number(r.id));
          await clearReference(tx, assetqueue.def, assetqueue.def.fields.find((f) => f.name === 'asset_id')!, queued);
        }
        // The published client reads response[0]: the asset as it is now.
        const page = await listRecords(ctx, assets.def, moved, readerOf(tx.db));
        return { response: `[${page.records.join(',')}]` };
      }, (reply) => reply);
    },
  },
};
