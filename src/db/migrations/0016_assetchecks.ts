// Checks (calibration, verification, inspection records) of assets: one row per check,
// its measurement points and its reference standards as JSON text as the API shows
// them, and the standards again as rows (check, position, asset), which filters over
// a check's standards and the refusal to delete a standard still cited read by index;
// and the asset's `last_result`.
import type { Kysely } from 'kysely';
import { createIndex, createTable } from './0001_initial.ts';

const NN = { notNull: true } as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'assetchecks', [
    ['id', 'id'], ['company_id', 'int', { notNull: true, references: 'companies.id' }],
    ['asset_id', 'int', { notNull: true, references: 'assets.id' }], ['check_type', 'text', NN], ['check_date', 'text', NN],
    ['performed_by', 'text', { notNull: true, default: '' }], ['certificate_no', 'text', { notNull: true, default: '' }],
    ['result', 'text', NN], ['points', 'json', NN], ['standard_ids', 'json', NN],
    ['file_id', 'int', { references: 'files.id' }], ['next_check', 'text'], ['data', 'json'],
    ['created', 'text', NN], ['modified', 'text', NN], ['version', 'int', { notNull: true, default: 1 }],
  ]);
  for (const cols of [['company_id', 'id'], ['asset_id', 'check_date', 'id'], ['file_id']]) await createIndex(db, 'assetchecks', cols);

  await createTable(db, 'assetcheck_standards', [
    ['check_id', 'int', { notNull: true, references: 'assetchecks.id' }], ['position', 'int', NN],
    ['asset_id', 'int', { notNull: true, references: 'assets.id' }],
  ], [['check_id', 'position']]);
  await createIndex(db, 'assetcheck_standards', ['asset_id', 'check_id']);

  // The result of the asset's latest check, kept with every check recorded or deleted.
  await db.schema.alterTable('assets').addColumn('last_result', 'text').execute();
}
