// better-sqlite3 in the major this Node line needs. 13 is built on Node-API 10
// (Node 22 and later) and ships its binaries in the npm package; 12 is compiled
// against each Node's own headers and is the one that runs on Node 20, whose
// Node-API stops at 9 (13 crashes it) — but 12's classes abort Node 24 when the
// garbage collector frees a statement outside a JavaScript context. So Node 20
// loads 12 (the optional dependency `better-sqlite3-node20`), every later line 13.
// Their API is the same; drop 12 with Node 20.
import type Sqlite from 'better-sqlite3';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The package this line loads (the writer thread loads the same, by its path). */
const PACKAGE = Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-node20';

function load(): typeof Sqlite {
  try {
    return require(PACKAGE) as typeof Sqlite;
  } catch (error) {
    if (PACKAGE === 'better-sqlite3') throw error;
    throw new Error(`Node ${process.version} needs better-sqlite3 12 (the optional dependency better-sqlite3-node20), `
      + 'which did not install: it compiles on install (python3, make and a C++ compiler)', { cause: error });
  }
}

const BetterSqlite3 = load();
/** Where the loaded package is, for a worker thread to load it too. */
export const driverPath = require.resolve(PACKAGE);
// The driver's types under the same name, as `import BetterSqlite3 from 'better-sqlite3'` gives them.
declare namespace BetterSqlite3 {
  export type Database = Sqlite.Database;
  export type Statement = Sqlite.Statement;
}
export default BetterSqlite3;
