// @ts-check
// Preloaded (`node --import ./test/support/sql-trace.js …`) into a CLI process under
// test: writes every SQL statement the process runs, and its completion, to file
// descriptor SQL_TRACE_FD as it happens, synchronously, so that a test which SIGKILLs the
// process knows exactly how far it had got. It observes only; nothing the process does changes.
// Plain JavaScript that imports none of the sources (checked by tsc): it preloads into the
// built CLI as it is, without a TypeScript loader's start-up in every traced process.
//
//   sql <n> <text>     about to run statement n (better-sqlite3 on this thread: run/all/get; SQLite's writer
//                      thread: sent to it; pg: Client#query)
//   ok <n>             statement n completed (on this thread: returned; elsewhere: its result arrived)
//   err <n>            statement n failed
import { channel } from 'node:diagnostics_channel';
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';

const fd = Number(process.env.SQL_TRACE_FD);

/** @param {string} line */
function mark(line) {
  const bytes = Buffer.from(`${line.replace(/\s+/g, ' ').trim()}\n`);
  for (let written = 0; written < bytes.length;) {
    try {
      written += writeSync(fd, bytes, written);
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code !== 'EAGAIN') return; // the test went away: trace nothing more
    }
  }
}

if (Number.isInteger(fd) && fd > 2) {
  let next = 0;

  // The package src/db/better-sqlite3.ts loads on this Node line (12 below Node-API 10, else 13).
  /** @type {(id: string) => typeof import('better-sqlite3')} */
  const load = createRequire(import.meta.url);
  const BetterSqlite3 = load(Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-node20');
  const probe = new BetterSqlite3(':memory:');
  /** @type {(o: object) => Record<string, (...args: unknown[]) => unknown>} */
  const prototypeOf = Object.getPrototypeOf;
  const statement = prototypeOf(probe.prepare('SELECT 1'));
  probe.close();
  for (const method of ['run', 'all', 'get', 'iterate']) {
    const original = /** @type {(...args: unknown[]) => unknown} */ (statement[method]);
    statement[method] = /** @this {{ source: string }} */ function traced(/** @type {unknown[]} */ ...args) {
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

  // The writer thread's statements, as they are sent to it and as their results come back
  // (published on this channel by src/db/sqlite-writer.ts).
  /** @type {Map<number, number>} */
  const sent = new Map();
  channel('asset-tracker:sqlite-writer').subscribe((message) => {
    const m = /** @type {{ id: number, sql?: string, ok?: boolean }} */ (message);
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

  const client = /** @type {{ query: (...args: unknown[]) => unknown }} */ (/** @type {unknown} */ (pg.Client.prototype));
  const query = client.query;
  client.query = function traced(/** @type {unknown[]} */ ...args) {
    const config = args[0];
    const text = typeof config === 'string' ? config : /** @type {{ text?: string } | null} */ (config)?.text;
    if (text === undefined) return query.apply(this, args);
    const n = next++;
    mark(`sql ${n} ${text}`);
    const result = query.apply(this, args);
    if (result && typeof (/** @type {Promise<unknown>} */ (result)).then === 'function') {
      /** @type {Promise<unknown>} */ (result).then(() => mark(`ok ${n}`), () => mark(`err ${n}`));
    }
    return result;
  };
}
