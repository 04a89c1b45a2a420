// Backups of the whole store: the database and the uploaded files' content,
// as one consistent pair in a directory, and their restore into an empty store.
//
// The database is copied as one committed state while the service serves: SQLite
// through its online backup API (page by page, started over should a write land
// meanwhile), PostgreSQL by pg_dump inside a snapshot the backup exports, in which it
// also reads which content the files refer to. Content is stored by its SHA-256 and
// never changes, so the copy takes what was there before the snapshot, adds what the
// snapshot refers to and came since, and drops what it does not refer to: the
// backup holds exactly the content of its database. Everything is written beside the
// target and renamed into place at the end, so a half-made backup never carries the name.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync,
  writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import BetterSqlite3 from '../db/better-sqlite3.ts';
import { AdminError } from '../errors.ts';
import { BlobStore } from '../storage/blobs.ts';

const run = promisify(execFile);

/** Runs one of PostgreSQL's client tools against `url` (its password through PGPASSWORD, off the command line other users can read). */
async function pgTool(tool: 'pg_dump' | 'pg_restore', args: readonly string[], databaseUrl: string): Promise<void> {
  const u = new URL(databaseUrl);
  const password = decodeURIComponent(u.password);
  u.password = '';
  const env = password ? { ...process.env, PGPASSWORD: password } : process.env;
  await run(tool, [...args, `--dbname=${u.toString()}`], { env }).catch((e: NodeJS.ErrnoException & { stderr?: string }) => {
    throw new AdminError(e.code === 'ENOENT' ? `${tool} is not installed (PostgreSQL's client tools)` : `${tool} failed: ${e.stderr?.trim() ?? e.message}`);
  });
}

/** Where the store is: a SQLite file, or a PostgreSQL URL; and the directory of the files' content. */
export type Store = { readonly engine: 'sqlite'; readonly file: string; readonly filesDir: string }
  | { readonly engine: 'postgres'; readonly url: string; readonly filesDir: string };

interface Manifest {
  readonly format: 1;
  readonly engine: Store['engine'];
  readonly database: string;
  /** Every content the database refers to, by its SHA-256, with its size. */
  readonly files: readonly { readonly id: string; readonly bytes: number }[];
}

export interface BackupResult {
  readonly dir: string; readonly engine: Store['engine']; readonly databaseBytes: number; readonly files: number; readonly fileBytes: number;
}

const MANIFEST = 'manifest.json';
const SQLITE_COPY = 'database.sqlite';
const PG_DUMP = 'database.dump';
const BLOB = /^[0-9a-f]{64}$/;
/** Where a content lies under a files directory: the service's own layout (BlobStore). */
const blobPath = (filesDir: string, id: string) => new BlobStore(filesDir).pathOf(id);

/** The content ids under a files directory (its `tmp/` of uploads under way left out). */
function blobsIn(filesDir: string): Set<string> {
  const found = new Set<string>();
  if (!existsSync(filesDir)) return found;
  for (const prefix of readdirSync(filesDir)) {
    if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
    for (const name of readdirSync(join(filesDir, prefix))) if (BLOB.test(name) && name.startsWith(prefix)) found.add(name);
  }
  return found;
}

/** A hard link where the file system allows one (content never changes), else a copy. */
function place(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const REFERENCED = 'SELECT DISTINCT upload_uuid AS id FROM files WHERE upload_uuid IS NOT NULL';

/** Copies the database into `dir`; returns the content ids the copy refers to. */
async function copyDatabase(store: Store, dir: string): Promise<string[]> {
  if (store.engine === 'sqlite') {
    const target = join(dir, SQLITE_COPY);
    await backupSqlite(store.file, target);
    const copy = new BetterSqlite3(target, { readonly: true });
    try {
      return (copy.prepare(REFERENCED).all() as { id: string }[]).map((r) => r.id);
    } finally {
      copy.close();
    }
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows: [snapshot] } = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
    const { rows } = await client.query<{ id: string }>(REFERENCED);
    await pgTool('pg_dump', ['--format=custom', `--snapshot=${snapshot!.id}`, `--file=${join(dir, PG_DUMP)}`], store.url);
    await client.query('COMMIT');
    return rows.map((r) => r.id);
  } finally {
    await client.end();
  }
}

/** Backs up the store into the new directory `out`: the database, the content its files refer to, and a manifest. */
export async function backupStore(store: Store, out: string): Promise<BackupResult> {
  if (existsSync(out)) throw new AdminError(`${out} already exists: name a new directory`);
  if (!existsSync(dirname(out))) throw new AdminError(`the directory ${dirname(out)} does not exist`);
  if (store.engine === 'sqlite' && !existsSync(store.file)) throw new AdminError(`there is no database at ${store.file}`);
  const partial = `${out}.partial-${process.pid}`;
  mkdirSync(partial);
  try {
    const filesDir = join(partial, 'files');
    const before = blobsIn(store.filesDir);
    for (const id of before) place(blobPath(store.filesDir, id), blobPath(filesDir, id));
    const referenced = new Set(await copyDatabase(store, partial));
    const files: { id: string; bytes: number }[] = [];
    for (const id of [...referenced].sort()) {
      if (!before.has(id)) {
        const live = blobPath(store.filesDir, id);
        if (!existsSync(live)) throw new AdminError(`the content ${id} was removed while the backup ran: run it again`);
        place(live, blobPath(filesDir, id));
      }
      const copy = blobPath(filesDir, id);
      if (await sha256Of(copy) !== id) throw new AdminError(`the content ${id} does not match its SHA-256: the files directory is damaged`);
      files.push({ id, bytes: statSync(copy).size });
    }
    for (const id of before) if (!referenced.has(id)) rmSync(blobPath(filesDir, id));
    const database = store.engine === 'sqlite' ? SQLITE_COPY : PG_DUMP;
    const manifest: Manifest = { format: 1, engine: store.engine, database, files };
    writeFileSync(join(partial, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(partial, out);
    return { dir: out, engine: store.engine, databaseBytes: statSync(join(out, database)).size, files: files.length,
      fileBytes: files.reduce((n, f) => n + f.bytes, 0) };
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
}

function readManifest(from: string): Manifest {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(from, MANIFEST), 'utf8')) as Manifest;
  } catch {
    throw new AdminError(`${from} holds no backup (no readable ${MANIFEST})`);
  }
  if (manifest.format !== 1 || (manifest.engine !== 'sqlite' && manifest.engine !== 'postgres')) throw new AdminError(`${from}: unknown backup format`);
  return manifest;
}

async function isEmptyPostgres(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>("SELECT COUNT(*) AS n FROM pg_tables WHERE schemaname = 'public'");
    return Number(rows[0]!.n) === 0;
  } finally {
    await client.end();
  }
}

/**
 * Restores a backup into an empty store (a new DATA_DIR, or an empty PostgreSQL
 * database) of the same engine: every content checked against its SHA-256 first,
 * then put in place, then the database. `serve` or `migrate` then brings an older
 * backup's schema up to date.
 */
export async function restoreStore(from: string, store: Store): Promise<{ engine: Store['engine']; files: number; fileBytes: number }> {
  const manifest = readManifest(from);
  if (manifest.engine !== store.engine) throw new AdminError(`${from} is a ${manifest.engine} backup; the store here is ${store.engine}`);
  for (const f of manifest.files) {
    const path = blobPath(join(from, 'files'), f.id);
    if (!existsSync(path) || await sha256Of(path) !== f.id) throw new AdminError(`${from}: the content ${f.id} is missing or damaged`);
  }
  if (blobsIn(store.filesDir).size > 0) throw new AdminError(`${store.filesDir} already holds files: restore into an empty store`);
  if (store.engine === 'sqlite' ? existsSync(store.file) : !(await isEmptyPostgres(store.url))) {
    throw new AdminError(`the database ${store.engine === 'sqlite' ? `at ${store.file}` : 'of DATABASE_URL'} is not empty: restore into an empty store`);
  }
  for (const f of manifest.files) {
    const to = blobPath(store.filesDir, f.id);
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(blobPath(join(from, 'files'), f.id), to);
  }
  if (store.engine === 'sqlite') {
    mkdirSync(dirname(store.file), { recursive: true });
    const partial = `${store.file}.partial-${process.pid}`;
    copyFileSync(join(from, manifest.database), partial);
    renameSync(partial, store.file);
  } else {
    await pgTool('pg_restore', ['--no-owner', '--exit-on-error', '--single-transaction', join(from, manifest.database)], store.url);
  }
  return { engine: store.engine, files: manifest.files.length, fileBytes: manifest.files.reduce((n, f) => n + f.bytes, 0) };
}

export interface SqliteBackup { readonly file: string; readonly bytes: number; readonly pages: number }

/** A checked copy of a SQLite database as one committed state, also while others write to it. */
export async function backupSqlite(source: string, target: string): Promise<SqliteBackup> {
  if (!existsSync(source)) throw new AdminError(`there is no database at ${source}`);
  if (existsSync(target)) throw new AdminError(`${target} already exists: name a new file`);
  const partial = `${target}.partial-${process.pid}`;
  const db = new BetterSqlite3(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // After the first step, every remaining page in one: one read, so a busy writer cannot keep restarting the copy.
    const { totalPages } = await db.backup(partial, { progress: () => 1_000_000_000 });
    const copy = new BetterSqlite3(partial, { fileMustExist: true });
    const check = copy.pragma('quick_check', { simple: true });
    // One self-contained file: no -wal or -shm beside it once it is read (the service turns WAL on again when it opens it).
    copy.pragma('journal_mode = DELETE');
    copy.close();
    if (check !== 'ok') throw new AdminError(`the copy failed SQLite's integrity check (${String(check)}); nothing was written`);
    renameSync(partial, target);
    return { file: target, bytes: statSync(target).size, pages: totalPages };
  } catch (error) {
    for (const f of [partial, `${partial}-wal`, `${partial}-shm`]) rmSync(f, { force: true });
    throw error;
  } finally {
    db.close();
  }
}
