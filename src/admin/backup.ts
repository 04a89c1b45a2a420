// Backups (spec §11). SQLite: SQLite's online backup API (through better-sqlite3),
// which copies page by page and starts over should another connection write
// meanwhile, so the copy is one committed state even while the service serves. It is
// written beside the target, checked, and renamed into place, so a half-written
// backup never carries the name. PostgreSQL: pg_dump takes one snapshot of any size
// better than the service could; the operator gets its command line.
import BetterSqlite3 from '../db/better-sqlite3.ts';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { AdminError } from '../errors.ts';

export interface SqliteBackup { readonly file: string; readonly bytes: number; readonly pages: number }

export async function backupSqlite(source: string, target: string): Promise<SqliteBackup> {
  if (!existsSync(source)) throw new AdminError(`there is no database at ${source}`);
  if (existsSync(target)) throw new AdminError(`${target} already exists: name a new file`);
  if (!existsSync(dirname(target))) throw new AdminError(`the directory ${dirname(target)} does not exist`);
  const partial = `${target}.partial-${process.pid}`;
  const db = new BetterSqlite3(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // After the first step, every remaining page in one: one read, so a busy writer cannot keep restarting the copy.
    const { totalPages } = await db.backup(partial, { progress: () => 1_000_000_000 });
    const copy = new BetterSqlite3(partial, { fileMustExist: true });
    const check = copy.pragma('quick_check', { simple: true });
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

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The pg_dump command line for the database at `url`, its password left out (pg_dump reads PGPASSWORD or ~/.pgpass). */
export function pgDumpCommand(url: string, target: string): { readonly command: string; readonly passwordOmitted: boolean } {
  const u = new URL(url);
  const passwordOmitted = u.password !== '';
  u.password = '';
  return { command: `pg_dump --format=custom --file=${shellQuote(target)} --dbname=${shellQuote(u.toString())}`, passwordOmitted };
}
