// Many assets written straight into the store (the API would take minutes), for the
// tests of work over large stores.
import type { Database } from '../../src/db/database.ts';

export interface SeedAsset {
  readonly company_id: number; readonly asset_no: string; readonly serial_no: string; readonly description: string;
  readonly status: string; readonly next_check: string | null; readonly date_added: string; readonly modified: string;
}

/** Inserts the rows, 500 to a statement (SQLite's bound on parameters stays far away). */
export async function insertAssets(database: Database, rows: readonly SeedAsset[]): Promise<void> {
  const db = database.db.withTables<{ assets: SeedAsset }>();
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('assets').values(rows.slice(i, i + 500)).execute();
}

/** The id of a company's first asset. */
export async function firstAssetId(database: Database, companyId: number): Promise<number> {
  const db = database.db.withTables<{ assets: SeedAsset & { id: number } }>();
  return Number((await db.selectFrom('assets').select('id').where('company_id', '=', companyId).orderBy('id').limit(1).executeTakeFirstOrThrow()).id);
}
