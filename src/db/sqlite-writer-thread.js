// @ts-check
// The embedded database's writer connection, on a thread of its own (see
// sqlite-writer.ts). better-sqlite3 runs a statement synchronously: on the thread
// that serves requests, a 5,000-row update or a 100,000-row import would stop every
// request for as long as it ran. Here it stops only this thread; the request thread
// sends each statement and awaits its result, and goes on serving meanwhile (its
// reads run on a connection of its own, which WAL lets see what is committed).
//
// Plain JavaScript (checked by tsc): a worker starts from a file Node can run as it
// is, in development as from the build.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

/** @typedef {{ id: number, sql: string, params: readonly unknown[] }} Query */
/** @typedef {{ file: string, driver: string, cacheSize: number }} WriterData */

// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- workerData is what sqlite-writer.ts passes: a WriterData
const data = /** @type {WriterData} */ (workerData);
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** @type {typeof import('better-sqlite3')} */
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- require() is untyped; the @type above says what it loads
const Sqlite = createRequire(import.meta.url)(data.driver);

const db = new Sqlite(data.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');

/** Prepared statements by their text, the least recently used dropped first. @type {Map<string, import('better-sqlite3').Statement>} */
const prepared = new Map();
/** @param {string} text */
function prepare(text) {
  let stmt = prepared.get(text);
  if (stmt) {
    prepared.delete(text);
  } else {
    stmt = db.prepare(text);
    if (prepared.size >= data.cacheSize) prepared.delete(/** @type {string} */ (prepared.keys().next().value));
  }
  prepared.set(text, stmt);
  return stmt;
}

/** @param {Query} q */
function run(q) {
  const stmt = prepare(q.sql);
  if (stmt.reader) return { id: q.id, rows: stmt.all(q.params) };
  const { changes, lastInsertRowid } = stmt.run(q.params);
  return { id: q.id, changes, lastInsertRowid };
}

port.on('message', (/** @type {Query | 'close'} */ q) => {
  if (q === 'close') {
    db.close();
    port.close();
    return;
  }
  try {
    port.postMessage(run(q));
  } catch (e) {
    const error = /** @type {{ message?: unknown, code?: unknown, name?: unknown }} */ (e);
    port.postMessage({ id: q.id, error: { message: String(error.message), code: error.code, name: error.name } });
  }
});
