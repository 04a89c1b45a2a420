// One run-made reminder per asset and due date: the unique index is
// what keeps concurrent reminder runs on several instances from duplicating.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('assetreminders_run_key').on('assetreminders').columns(['asset_id', 'due_date']).unique()
    .where(sql.ref('user_id'), 'is', null).execute();
  await db.schema.createIndex('assetreminders_company_id_sent_remind_date_idx').on('assetreminders')
    .columns(['company_id', 'sent', 'remind_date']).execute();
}
