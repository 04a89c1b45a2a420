// How many assets each company has per `next_check` date, kept by triggers in the
// same transaction as every insert, delete and change of an asset, whoever writes
// (API, CLI, jobs). The list most asked for — assets due before a date — counts its
// total from here: a few rows a day instead of every matching asset (19,349 of 100k
// assets in the benchmark, 191,890 of a million; the count of a million-asset store
// took 9–11 ms of SQLite). A row exists only while its count is above zero, so the
// table always equals `SELECT company_id, next_check, COUNT(*) … GROUP BY` of the
// assets with a date.
import { type Kysely, sql } from 'kysely';
import { forEngine } from '../dialects.ts';

const BACKFILL = `INSERT INTO asset_tallies (company_id, next_check, n)
  SELECT company_id, next_check, COUNT(*) FROM assets WHERE next_check IS NOT NULL GROUP BY company_id, next_check`;

// SQLite: row triggers (one writer), the table clustered on its key.
const add = (row: string) => `INSERT INTO asset_tallies (company_id, next_check, n)
    SELECT ${row}.company_id, ${row}.next_check, 1 WHERE ${row}.next_check IS NOT NULL
    ON CONFLICT (company_id, next_check) DO UPDATE SET n = n + 1;`;
const take = (row: string) => `DELETE FROM asset_tallies WHERE company_id = ${row}.company_id AND next_check = ${row}.next_check AND n = 1;
    UPDATE asset_tallies SET n = n - 1 WHERE company_id = ${row}.company_id AND next_check = ${row}.next_check;`;

const SQLITE = [
  `CREATE TABLE asset_tallies (company_id integer NOT NULL, next_check text NOT NULL, n integer NOT NULL,
    PRIMARY KEY (company_id, next_check)) WITHOUT ROWID`,
  `CREATE TRIGGER asset_tallies_insert AFTER INSERT ON assets BEGIN ${add('NEW')} END`,
  `CREATE TRIGGER asset_tallies_delete AFTER DELETE ON assets BEGIN ${take('OLD')} END`,
  `CREATE TRIGGER asset_tallies_update AFTER UPDATE OF company_id, next_check ON assets
    WHEN OLD.company_id IS NOT NEW.company_id OR OLD.next_check IS NOT NEW.next_check BEGIN ${take('OLD')} ${add('NEW')} END`,
];

// PostgreSQL: one statement trigger over the transition tables, set-based (a POST
// changing 5,000 assets applies one grouped delta). Rows are upserted in key order,
// so concurrent writers lock them in the same order.
const apply = (changes: string) => `
    INSERT INTO asset_tallies AS a (company_id, next_check, n)
      SELECT company_id, next_check, SUM(d) FROM (${changes}) AS c WHERE next_check IS NOT NULL
      GROUP BY company_id, next_check HAVING SUM(d) <> 0 ORDER BY company_id, next_check
      ON CONFLICT (company_id, next_check) DO UPDATE SET n = a.n + EXCLUDED.n;`;
const dropEmpty = `
    DELETE FROM asset_tallies AS a USING (SELECT DISTINCT company_id, next_check FROM old_rows) AS o
      WHERE a.company_id = o.company_id AND a.next_check = o.next_check AND a.n = 0;`;
const added = 'SELECT company_id, next_check, 1 AS d FROM new_rows';
const removed = 'SELECT company_id, next_check, -1 AS d FROM old_rows';

const POSTGRES = [
  `CREATE TABLE asset_tallies (company_id bigint NOT NULL, next_check text COLLATE "C" NOT NULL, n bigint NOT NULL,
    PRIMARY KEY (company_id, next_check))`,
  // An update that moves no asset to another date or company (most: a status, a check) changes no
  // tally, and then looks for no emptied row either.
  `CREATE FUNCTION asset_tallies_sync() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE changed bigint;
  BEGIN
    IF TG_OP = 'INSERT' THEN ${apply(added)}
    ELSE
      IF TG_OP = 'DELETE' THEN ${apply(removed)}
      ELSE ${apply(`${added} UNION ALL ${removed}`)}
      END IF;
      GET DIAGNOSTICS changed = ROW_COUNT;
      IF changed > 0 THEN ${dropEmpty}
      END IF;
    END IF;
    RETURN NULL;
  END $$`,
  ...['INSERT', 'DELETE', 'UPDATE'].map((op) => `CREATE TRIGGER asset_tallies_${op.toLowerCase()} AFTER ${op} ON assets
    REFERENCING ${op === 'INSERT' ? '' : 'OLD TABLE AS old_rows'} ${op === 'DELETE' ? '' : 'NEW TABLE AS new_rows'}
    FOR EACH STATEMENT EXECUTE FUNCTION asset_tallies_sync()`),
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const text of forEngine(db, { sqlite: SQLITE, postgres: POSTGRES })) await sql.raw(text).execute(db);
  await sql.raw(BACKFILL).execute(db);
}
