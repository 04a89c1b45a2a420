// The initial schema, one definition for both engines. Dates and datetimes are
// fixed-width UTC text (`YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`) so that they compare
// and sort the same everywhere; text compares by bytes (COLLATE "C" on PostgreSQL);
// dynamic JSON is `json` on PostgreSQL (keeps key order) and TEXT on SQLite.
// Every tenant table carries company_id with a (company_id, …) index so that a
// company's page and its total count are both index range scans.
import { type ColumnDefinitionBuilder, type Kysely, sql } from 'kysely';
import { forEngine } from '../dialects.ts';

type ColumnType = 'id' | 'int' | 'text' | 'json';
interface ColumnOptions { notNull?: boolean; default?: string | number; references?: string; unique?: boolean }
type Column = readonly [name: string, type: ColumnType, options?: ColumnOptions];

const NN = { notNull: true } as const;

type DataType = Parameters<ReturnType<Kysely<unknown>['schema']['createTable']>['addColumn']>[1];
interface EngineTypes {
  readonly int: DataType;
  readonly json: DataType;
  readonly text: DataType;
  readonly id: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
}

/** Each engine's column types, and how its ids count up. */
const ENGINE_TYPES: { readonly sqlite: EngineTypes; readonly postgres: EngineTypes } = {
  sqlite: { int: 'integer', json: 'text', text: 'text', id: (c) => c.primaryKey().autoIncrement() },
  postgres: { int: 'bigint', json: 'json', text: sql`text collate "C"`, id: (c) => c.primaryKey().generatedByDefaultAsIdentity() },
};

export async function createTable(db: Kysely<unknown>, table: string, columns: readonly Column[], uniques: readonly (readonly string[])[] = []): Promise<void> {
  const types = forEngine(db, ENGINE_TYPES);
  let builder = db.schema.createTable(table);
  for (const [name, type, o = {}] of columns) {
    const dataType = type === 'id' || type === 'int' ? types.int : types[type];
    builder = builder.addColumn(name, dataType, (c) => {
      if (type === 'id') return types.id(c);
      let col = c;
      if (o.notNull) col = col.notNull();
      if (o.default !== undefined) col = col.defaultTo(o.default);
      if (o.references) col = col.references(o.references);
      if (o.unique) col = col.unique();
      return col;
    });
  }
  // The builder types columns against a typed schema; migrations run untyped.
  for (const cols of uniques) builder = builder.addUniqueConstraint(`${table}_${cols.join('_')}_key`, [...cols] as never[]);
  await builder.execute();
}

export async function createIndex(db: Kysely<unknown>, table: string, columns: readonly string[]): Promise<void> {
  await db.schema.createIndex(`${table}_${columns.join('_')}_idx`).on(table).columns([...columns]).execute();
}

const company = ['company_id', 'int', { notNull: true, references: 'companies.id' }] as const;
const modified = ['modified', 'text', NN] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'companies', [
    ['id', 'id'], ['name', 'text', NN], ['created', 'text', NN], ['logo', 'text'], ['subdomain', 'text', { unique: true }],
    ['styles', 'json'], ['data', 'json'], ['parent_id', 'int', { references: 'companies.id' }], modified,
  ]);
  await createIndex(db, 'companies', ['parent_id']);

  await createTable(db, 'clients', [
    ['id', 'id'], company, ['name', 'text', { notNull: true, default: '' }], ['fingerprint', 'text', { notNull: true, unique: true }],
    ['impersonation', 'int', { notNull: true, default: 0 }], ['created', 'text', NN], ['revoked', 'text'],
  ]);
  await createIndex(db, 'clients', ['company_id']);

  for (const table of ['departments', 'locations']) {
    await createTable(db, table, [
      ['id', 'id'], company, ['description', 'text', NN], ['creationdate', 'text', NN], ['data', 'json'], modified,
    ]);
    await createIndex(db, table, ['company_id', 'id']);
  }

  await createTable(db, 'externaltypes', [
    ['id', 'id'], ['external_itemtype_id', 'int'], company, ['description', 'text', { notNull: true, default: '' }], ['data', 'json'], modified,
  ], [['company_id', 'external_itemtype_id']]);
  await createIndex(db, 'externaltypes', ['company_id', 'id']);

  await createTable(db, 'users', [
    ['id', 'id'], ['username', 'text', { notNull: true, unique: true }], ['email', 'text', NN],
    ['first_name', 'text', { notNull: true, default: '' }], ['last_name', 'text', { notNull: true, default: '' }],
    ['phone', 'text', { notNull: true, default: '' }], ['email_confirmed', 'int', { notNull: true, default: 0 }],
    ['password_last_changed', 'text'], ['permissions', 'json'], company, ['reminders', 'int', { notNull: true, default: 1 }],
    ['data', 'json'], modified, ['password_hash', 'text'],
  ]);
  await createIndex(db, 'users', ['company_id', 'id']);

  await createTable(db, 'assets', [
    ['id', 'id'], company, ['asset_no', 'text', NN], ['serial_no', 'text', { notNull: true, default: '' }],
    ['description', 'text', { notNull: true, default: '' }], ['status', 'text', { notNull: true, default: 'Active' }],
    ['next_check', 'text'], ['last_check', 'text'], ['period', 'int'],
    ['location_id', 'int', { references: 'locations.id' }], ['department_id', 'int', { references: 'departments.id' }],
    ['external_type_id', 'int', { references: 'externaltypes.id' }], ['date_added', 'text', NN], ['data', 'json'], modified,
  ], [['company_id', 'asset_no']]);
  for (const cols of [['company_id', 'id'], ['company_id', 'next_check'], ['company_id', 'status'], ['location_id'], ['department_id'], ['external_type_id']]) {
    await createIndex(db, 'assets', cols);
  }

  await createTable(db, 'assetqueue', [
    ['id', 'id'], company, ['external_type_id', 'int', { references: 'externaltypes.id' }],
    ['manufacturer', 'text', { notNull: true, default: '' }], ['model', 'text', { notNull: true, default: '' }],
    ['asset_no', 'text', { notNull: true, default: '' }], ['serial_no', 'text', { notNull: true, default: '' }],
    ['description', 'text', NN], ['next_date', 'text'], ['period', 'int'], ['status', 'text', { notNull: true, default: 'Active' }],
    ['date_added', 'text', NN], ['department_id', 'int', { references: 'departments.id' }],
    ['location_id', 'int', { references: 'locations.id' }], ['last_error', 'text', { notNull: true, default: '' }],
    ['requested_date', 'text', NN], ['released', 'int', { notNull: true, default: 0 }], ['data', 'json'],
    ['asset_id', 'int', { references: 'assets.id' }], modified,
  ]);
  for (const cols of [['company_id', 'id'], ['company_id', 'released'], ['asset_id'], ['department_id'], ['location_id'], ['external_type_id']]) {
    await createIndex(db, 'assetqueue', cols);
  }

  await createTable(db, 'files', [
    ['id', 'id'], ['upload_uuid', 'text'], ['token', 'text', { notNull: true, unique: true }], ['filedate', 'text', NN],
    ['description', 'text', { notNull: true, default: '' }], ['filename', 'text', { notNull: true, default: '' }],
    ['asset_id', 'int', { notNull: true, references: 'assets.id' }], company, ['data', 'json', { notNull: true, default: '{}' }],
    ['mimetype', 'text'], ['size', 'int'], modified,
  ]);
  for (const cols of [['company_id', 'id'], ['asset_id'], ['upload_uuid']]) await createIndex(db, 'files', cols);

  await createTable(db, 'assetreminders', [
    ['id', 'id'], company, ['asset_id', 'int', { notNull: true, references: 'assets.id' }],
    ['user_id', 'int', { references: 'users.id' }], ['due_date', 'text', NN], ['remind_date', 'text', NN],
    ['message', 'text', { notNull: true, default: '' }], ['sent', 'int', { notNull: true, default: 0 }],
    ['acknowledged', 'int', { notNull: true, default: 0 }], ['data', 'json'],
  ]);
  for (const cols of [['company_id', 'id'], ['asset_id', 'due_date'], ['user_id']]) await createIndex(db, 'assetreminders', cols);

  await createTable(db, 'messages', [
    ['id', 'id'], ['sender_user_id', 'int', { references: 'users.id' }], ['target_user_id', 'int', { references: 'users.id' }],
    ['company_id', 'int', { references: 'companies.id' }], ['message_read', 'int', { notNull: true, default: 0 }],
    ['date_range_start', 'text'], ['date_range_end', 'text'], ['messagetext', 'text', { notNull: true, default: '' }],
    ['data', 'json'], modified,
  ]);
  for (const cols of [['company_id', 'id'], ['target_user_id'], ['sender_user_id']]) await createIndex(db, 'messages', cols);

  // Per-user read state of a message addressed to a whole company (target null).
  await createTable(db, 'message_reads', [
    ['message_id', 'int', { notNull: true, references: 'messages.id' }], ['user_id', 'int', { notNull: true, references: 'users.id' }],
    company, ['read_at', 'text', NN],
  ], [['message_id', 'user_id']]);
  await createIndex(db, 'message_reads', ['user_id']);

  // Append-only: no foreign keys, so that deleting a record never touches its history.
  await createTable(db, 'auditlog', [
    ['id', 'id'], ['asset_id', 'int'], ['company_id', 'int'], ['user_id', 'int'], ['file_id', 'int'], ['logdate', 'text', NN],
    ['message', 'text', NN], ['olddata', 'json', NN], ['newdata', 'json', NN], ['endpoint', 'text', NN], ['record_id', 'int'],
    ['action', 'text', NN], ['client_id', 'int'], ['ip', 'text'],
  ]);
  for (const cols of [['company_id', 'id'], ['asset_id'], ['company_id', 'action']]) await createIndex(db, 'auditlog', cols);
}
