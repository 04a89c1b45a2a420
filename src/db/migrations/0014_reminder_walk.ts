// The reminder run walks a company's unsent reminders in (remind_date, id) order, a
// slice at a time (jobs/reminders.ts). PostgreSQL's index of (company_id, sent,
// remind_date) gave that order up to the id, so every slice read and sorted all
// the company's unsent reminders to return the first few hundred (36 ms a slice at
// 5,000 of them); with the id in the index a slice reads only its own rows.
import { type Kysely, sql } from 'kysely';
import { createIndex } from './0001_initial.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX assetreminders_company_id_sent_remind_date_idx`.execute(db);
  await createIndex(db, 'assetreminders', ['company_id', 'sent', 'remind_date', 'id']);
}
