import Database from '../src/db/better-sqlite3.ts';
import { readFileSync } from 'node:fs';
const { text, params } = JSON.parse(readFileSync('/tmp/prof/w1.sql', 'utf8'));
const db = new Database('.bench/sqlite/asset-tracker.sqlite', { readonly: true });
const stmt = db.prepare(text);
let keep = 0;
const tick = () => new Promise((r) => setImmediate(r));
const row = stmt.all(params)[0] as { j: string };
console.log(row.j.length, Buffer.byteLength(row.j), /[^\x00-\xff]/.test(row.j));
for (let round = 0; round < 100; round++) {
  for (let i = 0; i < 2000; i++) { const rows = stmt.all(params) as { j: string }[]; keep += rows[0]!.j.length; }
  await tick();
}
console.log(keep);
