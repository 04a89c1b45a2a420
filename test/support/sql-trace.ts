// Preloaded (`node --import tsx --import ./test/support/sql-trace.ts …`) into a CLI process
// under test: writes every SQL statement the process runs, and its completion, to file
// descriptor SQL_TRACE_FD as it happens, synchronously, so that a test which SIGKILLs the
// process knows exactly how far it had got. It observes only; nothing the process does changes.
//
//   sql <n> <text>     about to run statement n (better-sqlite3 on this thread: run/all/get; SQLite's writer
//                      thread: sent to it; pg: Client#query)
//   ok <n>             statement n completed (on this thread: returned; elsewhere: its result arrived)
//   err <n>            statement n failed
import { writeSync } from 'node:fs';
import pg from 'pg';
import BetterSqlite3 from '../../src/db/better-sqlite3.ts';
import { writerStatements } from '../../src/db/sqlite-writer.ts';

const fd = Number(process.env.SQL_TRACE_FD);

function mark(line: string): void {
  const bytes = Buffer.from(`${line.replace(/\s+/g, ' ').trim()}\n`);
  for (let written = 0; written < bytes.length;) {
    try {
      written += writeSync(fd, bytes, written);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return; // the test went away: trace nothing more
    }
  }
}

if (Number.isInteger(fd) && fd > 2) {
  let next = 0;

  const probe = new BetterSqlite3(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  probe.close();
  for (const method of ['run', 'all', 'get', 'iterate']) {
    const original = statement[method]!;
    statement[method] = function traced(this: { source: string }, ...args: unknown[]) {
      const n = next++;
      mark(`sql ${n} ${this.source}`);
      try {
        const result = original.apply(this, args);
        mark(`ok ${n}`);
        return result;
      } catch (e) {
        mark(`err ${n}`);
        throw e;
      }
    };
  }

  // The writer thread's statements, as they are sent to it and as their results come back.
  const sent = new Map<number, number>();
  writerStatements.subscribe((message) => {
    const m = message as { id: number; sql?: string; ok?: boolean };
    if (m.sql !== undefined) {
      const n = next++;
      sent.set(m.id, n);
      mark(`sql ${n} ${m.sql}`);
      return;
    }
    const n = sent.get(m.id);
    if (n === undefined) return;
    sent.delete(m.id);
    mark(`${m.ok ? 'ok' : 'err'} ${n}`);
  });

  const client = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = client.query;
  client.query = function traced(this: unknown, ...args: unknown[]) {
    const config = args[0];
    const text = typeof config === 'string' ? config : (config as { text?: string } | null)?.text;
    if (text === undefined) return query.apply(this, args);
    const n = next++;
    mark(`sql ${n} ${text}`);
    const result = query.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).then(() => mark(`ok ${n}`), () => mark(`err ${n}`));
    }
    return result;
  };
}
