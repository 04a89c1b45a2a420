import Database from '../src/db/better-sqlite3.ts';
const db = new Database('/tmp/prof/w3.sqlite');
const scope = `SELECT descendant_id FROM company_closure WHERE ancestor_id = 1`;
if (process.argv[2] === 'create') { db.exec('CREATE INDEX IF NOT EXISTS assets_walk ON assets(id, company_id, next_check)'); db.exec('ANALYZE'); }
const run = (s: any, o: number) => s.all("2026-11-27", o);
const variants: Record<string, string> = {
  notindexed: `SELECT t.id FROM assets AS t NOT INDEXED WHERE t.next_check < ? AND t.company_id IN (${scope}) ORDER BY t.id LIMIT 30 OFFSET ?`,
  noscope: `SELECT t.id FROM assets AS t NOT INDEXED WHERE t.next_check < ? ORDER BY t.id LIMIT 30 OFFSET ?`,
  noscopeidx: `SELECT t.id FROM assets AS t INDEXED BY assets_walk WHERE t.next_check < ? ORDER BY t.id LIMIT 30 OFFSET ?`,
  range: `SELECT t.id FROM assets AS t NOT INDEXED WHERE t.next_check < ? AND t.company_id BETWEEN 1 AND 4 ORDER BY t.id LIMIT 30 OFFSET ?`,
  walkidx: `SELECT t.id FROM assets AS t INDEXED BY assets_walk WHERE t.next_check < ? AND t.company_id IN (${scope}) ORDER BY t.id LIMIT 30 OFFSET ?`,
};
for (const [name, text] of Object.entries(variants)) {
  let stmt; try { stmt = db.prepare(text); } catch (e) { console.log(name, String(e)); continue; }
  console.log(name, db.prepare(`EXPLAIN QUERY PLAN ${text}`).all('2026-11-27', 3000).map((r: any) => r.detail).join(' | '));
  for (const offset of [0, 3000]) {
    for (let i = 0; i < 200; i++) run(stmt, offset);
    const t = process.hrtime.bigint(); const N = 1000;
    for (let i = 0; i < N; i++) run(stmt, offset);
    console.log(`  offset ${offset}: ${(Number(process.hrtime.bigint() - t) / N / 1000).toFixed(1)} µs`);
  }
}
