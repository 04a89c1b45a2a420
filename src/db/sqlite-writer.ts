// The embedded database's one writer connection lives on a thread of its own
// (sqlite-writer-thread.js); this is its Kysely driver on the request thread. Each
// statement is a message there and its result a message back, so however long a
// write runs — a 5,000-row update with its triggers, a 100,000-row import — the
// request thread goes on serving meanwhile, its reads on the reader connection.
// A statement costs a round trip between the threads (tens of µs) on top of its
// own time; a request writes a few statements.
//
// Kysely lends the connection to one caller at a time (a transaction holds it
// from BEGIN to COMMIT), as it did the in-thread connection.
import { channel } from 'node:diagnostics_channel';
import { Worker } from 'node:worker_threads';
import {
  CompiledQuery, type DatabaseConnection, type Dialect, type Driver, type QueryResult, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler,
} from 'kysely';
import { driverPath } from './better-sqlite3.ts';

/**
 * Every statement the writer runs, as it is sent (`{ id, sql }`) and as its result
 * comes back (`{ id, ok }`): what an observer (a test that kills the process at a
 * chosen statement) needs to know how far the process had got.
 */
export const writerStatements = channel('asset-tracker:sqlite-writer');

interface Answer { id: number; rows?: unknown[]; changes?: number; lastInsertRowid?: number | bigint; error?: { message: string; code?: unknown; name?: unknown } }
interface Waiting { resolve(result: QueryResult<unknown>): void; reject(error: unknown): void }

const THREAD = new URL('./sqlite-writer-thread.js', import.meta.url);

/** The writer thread: statements in, results out, in order. */
class WriterThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private next = 0;
  private failure: Error | null = null;
  private readonly exited: Promise<void>;

  constructor(file: string, private readonly on: WriterEvents, cacheSize = 500) {
    // Only the thread's own file runs there: no loader or preload of this process's command line.
    this.worker = new Worker(THREAD, { workerData: { file, driver: driverPath, cacheSize }, execArgv: [] });
    this.worker.unref();
    this.worker.on('message', (a: Answer) => this.answer(a));
    this.worker.on('error', (error) => this.fail(error));
    this.exited = new Promise((resolve) => this.worker.once('exit', () => {
      this.fail(new Error('the database writer thread has stopped'));
      resolve();
    }));
  }

  run(sql: string, params: readonly unknown[]): Promise<QueryResult<unknown>> {
    if (this.failure) return Promise.reject(this.failure);
    const id = ++this.next;
    if (writerStatements.hasSubscribers) writerStatements.publish({ id, sql });
    // A statement under way keeps the process alive (an idle thread does not).
    if (this.waiting.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, sql, params });
    });
  }

  private answer(a: Answer): void {
    const waiting = this.waiting.get(a.id);
    if (!waiting) return;
    this.waiting.delete(a.id);
    if (this.waiting.size === 0) this.worker.unref();
    this.on.afterEach();
    if (writerStatements.hasSubscribers) writerStatements.publish({ id: a.id, ok: !a.error });
    if (a.error) {
      waiting.reject(Object.assign(new Error(a.error.message), { name: a.error.name ?? 'SqliteError', code: a.error.code }));
    } else if (a.rows) {
      waiting.resolve({ rows: a.rows });
    } else {
      waiting.resolve({
        rows: [],
        numAffectedRows: a.changes === undefined ? undefined : BigInt(a.changes),
        insertId: a.lastInsertRowid === undefined ? undefined : BigInt(a.lastInsertRowid),
      });
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const w of this.waiting.values()) w.reject(error);
    this.waiting.clear();
  }

  private closing: Promise<void> | null = null;

  /** Closes the thread (once, however often it is called). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.on.beforeClose();
      if (!this.failure) this.worker.postMessage('close');
      this.worker.ref();
      await this.exited;
    })();
    return this.closing;
  }
}

/** One connection, lent to one caller at a time. */
class Turns {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves with the release function once it is the caller's turn. */
  async take(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((r) => { release = r; });
    const before = this.tail;
    this.tail = before.then(() => mine);
    await before;
    return release;
  }
}

class WriterDriver implements Driver {
  private readonly turns = new Turns();
  private release: (() => void) | null = null;
  private readonly connection: DatabaseConnection;

  constructor(private readonly thread: WriterThread) {
    this.connection = {
      executeQuery: <R>(q: CompiledQuery) => thread.run(q.sql, q.parameters) as Promise<QueryResult<R>>,
      streamQuery: () => { throw new Error('the writer connection does not stream'); },
    };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    this.release = await this.turns.take();
    return this.connection;
  }

  async beginTransaction(c: DatabaseConnection): Promise<void> { await c.executeQuery(CompiledQuery.raw('begin')); }
  async commitTransaction(c: DatabaseConnection): Promise<void> { await c.executeQuery(CompiledQuery.raw('commit')); }
  async rollbackTransaction(c: DatabaseConnection): Promise<void> { await c.executeQuery(CompiledQuery.raw('rollback')); }

  async releaseConnection(): Promise<void> {
    const release = this.release;
    this.release = null;
    release?.();
  }

  destroy(): Promise<void> { return this.thread.close(); }
}

export interface WriterEvents {
  /** Runs on this thread as each statement's result arrives. */
  afterEach(): void;
  /** Runs when the dialect is destroyed, before the thread closes. */
  beforeClose(): void;
}

/**
 * A Kysely dialect whose one connection is the writer thread on `file`, and the thread's
 * close: Kysely closes its driver only if it ever used it, and the thread is there from the start.
 */
export function writerDialect(file: string, on: WriterEvents): { dialect: Dialect; readonly close: () => Promise<void> } {
  const thread = new WriterThread(file, on);
  return {
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new WriterDriver(thread),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
    close: () => thread.close(),
  };
}
