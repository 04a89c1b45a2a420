import { invalidValue } from '../errors.ts';
import type { Row } from '../model/types.ts';
import type { WriteTx } from '../engine/types.ts';

/** Records that hang off an asset (files, reminders) belong to the asset's company. */
export async function takeAssetCompany(tx: WriteTx, record: Row): Promise<void> {
  const id = record.asset_id;
  const asset = typeof id === 'number' ? await tx.find(tx.ctx.catalog.lookup('assets'), id) : null;
  if (!asset) throw invalidValue('asset_id');
  record.company_id = asset.company_id ?? null;
}
