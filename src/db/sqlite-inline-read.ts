// Reads that a write transaction makes before its first write, answered on the request
// thread's reader connection instead of a round trip to the writer thread
// (sqlite-writer.ts). Once the writer holds the write lock (BEGIN IMMEDIATE), no other
// connection can commit; while the writer has written nothing in its transaction, the
// reader — its snapshot taken after the lock, since the answer to BEGIN ends the
// snapshot before (sqlite.ts) — sees exactly what the writer would. A request's write
// reads its records, its company and its references first: on the embedded database
// those reads then cost what a GET's do, not a message to the other thread and back.
//
// Only a SELECT (or WITH … SELECT) that the reader can run, and only while it yields at
// most INLINE_ROWS rows: a bigger read (a bulk update's thousands of records) goes to the
// writer thread, where it cannot hold up the requests this thread serves.
import type BetterSqlite3 from './better-sqlite3.ts';

/** Rows an inline read may give before it is handed to the writer thread instead. */
export const INLINE_ROWS = 500;

const QUERY = /^\s*(select|with)\b/i;

/**
 * A read answered on this thread, or undefined when the writer thread must run `sql`
 * (not a plain read, one the reader cannot prepare or run, or more than INLINE_ROWS rows).
 */
export type InlineRead = (sql: string, params: readonly unknown[]) => unknown[] | undefined;

export function inlineReads(prepare: (text: string) => BetterSqlite3.Statement, enterSnapshot: () => void): InlineRead {
  const refused = new Set<string>();
  return (text, params) => {
    if (refused.has(text) || !QUERY.test(text)) return undefined;
    try {
      const stmt = prepare(text);
      if (!stmt.reader || !stmt.readonly) {
        refused.add(text);
        return undefined;
      }
      enterSnapshot();
      const rows: unknown[] = [];
      for (const row of stmt.iterate(params)) {
        if (rows.length === INLINE_ROWS) return undefined;
        rows.push(row);
      }
      return rows;
    } catch {
      return undefined;
    }
  };
}
