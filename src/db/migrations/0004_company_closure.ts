// The company tree as data: a closure table holds one row per
// (ancestor, descendant) pair, the company itself included at depth 0, so a scope
// is one indexed lookup instead of a recursive walk in every statement. Triggers
// keep it in the same transaction as every company insert, move and delete,
// whoever writes (API, CLI, jobs). Also the indexes the list pages and their
// counts need: company scope plus `next_check` and `modified`, with `id` so a
// page's ids come from the index alone.
import { type Kysely, sql } from 'kysely';
import { forEngine } from '../dialects.ts';
import { createIndex, createTable } from './0001_initial.ts';

const BACKFILL = sql`WITH RECURSIVE walk(ancestor_id, descendant_id, depth) AS (
    SELECT id, id, 0 FROM companies
    UNION ALL SELECT w.ancestor_id, c.id, w.depth + 1 FROM walk w JOIN companies c ON c.parent_id = w.descendant_id WHERE w.depth < 1000)
  INSERT INTO company_closure (ancestor_id, descendant_id, depth) SELECT ancestor_id, descendant_id, depth FROM walk`;

// A move detaches the company's subtree from its old ancestors and hangs it under the new parent's.
const detach = (id: string) => `DELETE FROM company_closure
    WHERE descendant_id IN (SELECT descendant_id FROM company_closure WHERE ancestor_id = ${id})
    AND ancestor_id NOT IN (SELECT descendant_id FROM company_closure WHERE ancestor_id = ${id});`;
const attach = (id: string, parent: string) => `INSERT INTO company_closure (ancestor_id, descendant_id, depth)
    SELECT a.ancestor_id, d.descendant_id, a.depth + d.depth + 1 FROM company_closure a, company_closure d
    WHERE a.descendant_id = ${parent} AND d.ancestor_id = ${id};`;
const insert = `INSERT INTO company_closure (ancestor_id, descendant_id, depth)
    SELECT ancestor_id, NEW.id, depth + 1 FROM company_closure WHERE descendant_id = NEW.parent_id
    UNION ALL SELECT NEW.id, NEW.id, 0;`;
const remove = 'DELETE FROM company_closure WHERE descendant_id = OLD.id OR ancestor_id = OLD.id;';

const SQLITE_TRIGGERS = [
  `CREATE TRIGGER companies_closure_insert AFTER INSERT ON companies BEGIN ${insert} END`,
  `CREATE TRIGGER companies_closure_delete AFTER DELETE ON companies BEGIN ${remove} END`,
  `CREATE TRIGGER companies_closure_move AFTER UPDATE OF parent_id ON companies WHEN OLD.parent_id IS NOT NEW.parent_id
    BEGIN ${detach('NEW.id')} ${attach('NEW.id', 'NEW.parent_id')} END`,
];

// On PostgreSQL, tree changes take turns across transactions (the lock the company
// moves already take), so a company created under a subtree being moved lands right.
const POSTGRES_TRIGGERS = [
  `CREATE FUNCTION company_closure_sync() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'UPDATE' AND NEW.parent_id IS NOT DISTINCT FROM OLD.parent_id THEN RETURN NULL; END IF;
    PERFORM pg_advisory_xact_lock(hashtext('companies.tree'));
    IF TG_OP = 'INSERT' THEN ${insert}
    ELSIF TG_OP = 'DELETE' THEN ${remove}
    ELSE ${detach('NEW.id')} ${attach('NEW.id', 'NEW.parent_id')}
    END IF;
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER companies_closure AFTER INSERT OR DELETE OR UPDATE OF parent_id ON companies
    FOR EACH ROW EXECUTE FUNCTION company_closure_sync()`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'company_closure', [
    ['ancestor_id', 'int', { notNull: true }], ['descendant_id', 'int', { notNull: true }], ['depth', 'int', { notNull: true }],
  ], [['ancestor_id', 'descendant_id']]);
  await createIndex(db, 'company_closure', ['descendant_id', 'ancestor_id']);
  await BACKFILL.execute(db);
  for (const text of forEngine(db, { sqlite: SQLITE_TRIGGERS, postgres: POSTGRES_TRIGGERS })) await sql.raw(text).execute(db);

  await db.schema.dropIndex('assets_company_id_next_check_idx').execute();
  // An asset's files come in id order from the index, for its `files` embed.
  await db.schema.dropIndex('files_asset_id_idx').execute();
  await createIndex(db, 'files', ['asset_id', 'id']);
  await createIndex(db, 'assets', ['company_id', 'next_check', 'id']);
  for (const table of ['assets', 'assetqueue', 'departments', 'locations', 'externaltypes', 'files', 'messages', 'users']) {
    await createIndex(db, table, ['company_id', 'modified', 'id']);
  }
}
