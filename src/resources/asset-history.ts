// What recording a check does beyond its own row, in its transaction: the asset
// follows its latest check (dates, status), the standards it used must have been in
// calibration on its date, its standards are linked for filters and references, and
// a failed check of a standard names the checks that relied on it since its last
// good check (the `assetchecks.failed` event).
import { sql } from 'kysely';
import { Param } from '../db/statements.ts';
import { dataError, invalidValue } from '../errors.ts';
import { emitEvents } from '../events/triggers.ts';
import { addMonths, todayIn, validZone } from '../model/dates.ts';
import { JsonObject, parseJson } from '../model/json.ts';
import type { Row } from '../model/types.ts';
import { fieldsJson, recordEntry } from '../engine/audit.ts';
import { visible } from '../engine/select.ts';
import type { WriteTx } from '../engine/types.ts';

export const OUT_OF_TOLERANCE = 'Out of tolerance';
const BUILT_IN_TYPES = ['calibration', 'verification', 'inspection', 'pat', 'loler', 'service'];

/** The link rows of a check's standards (check, position, asset). */
export const STANDARDS_LINK = { table: 'assetcheck_standards', from: 'check_id', to: 'asset_id', position: 'position' } as const;

const P = (name: string) => new Param(name);

function dataOf(text: unknown): JsonObject | null {
  if (typeof text !== 'string') return null;
  const v = parseJson(text);
  return v instanceof JsonObject ? v : null;
}

/**
 * Where a new check of `asset` belongs, read in one statement: the asset's company (the
 * check's), the check types its assets take (the built-in ones and the `check_types` of
 * the company and its ancestors) and today's date in the company's time zone; null when
 * the caller cannot see the asset.
 */
export async function placeOf(tx: WriteTx, asset: number): Promise<{ companyId: number; types: Set<string>; today: string } | null> {
  const { hooks } = tx.shape;
  const { rows } = await tx.run<{ company_id: number; id: number; data: string | null }>('check-place', () => sql`SELECT a.company_id, c.id,
    ${hooks.text(sql.ref('c.data'))} AS data FROM assets AS a JOIN company_closure AS cc ON cc.descendant_id = a.company_id
    JOIN companies AS c ON c.id = cc.ancestor_id WHERE a.id = ${P('asset')} AND ${visible(tx.shape, tx.ctx.catalog.lookup('assets'), 'a', 'probe')}`,
  { asset });
  if (rows.length === 0) return null;
  const companyId = Number(rows[0]!.company_id);
  const types = new Set(BUILT_IN_TYPES);
  let zone = 'UTC';
  for (const row of rows) {
    const data = dataOf(row.data);
    const listed = data?.entries.get('check_types');
    if (Array.isArray(listed)) for (const t of listed) if (typeof t === 'string') types.add(t);
    const z = data?.entries.get('timezone');
    if (Number(row.id) === companyId && typeof z === 'string' && validZone(z)) zone = z;
  }
  return { companyId, types, today: todayIn(zone, new Date(`${tx.now.replace(' ', 'T')}Z`)) };
}

interface Standard {
  id: number; status: string; next_check: string | null; day: string | null; result: string | null; next: string | null;
}

/**
 * The standards of a check of `asset` dated `day`, read in one statement: each must be
 * another asset the caller can see (else 400), and in calibration on the day (else 409
 * for the first that is not): its latest check on or before the day neither failed nor
 * gave a next check before it; with no such check, its own next check is not before the
 * day and it is not out of tolerance.
 */
export async function checkStandards(tx: WriteTx, asset: number, standards: readonly number[], day: string): Promise<void> {
  if (standards.length === 0) return;
  const { hooks } = tx.shape;
  const { rows } = await tx.run<Standard>('check-standards', () => sql`SELECT s.id, s.status, s.next_check, c.check_date AS day,
    c.result, c.next_check AS next FROM assets AS s LEFT JOIN assetchecks AS c ON c.id = (SELECT lc.id FROM assetchecks AS lc
      WHERE lc.asset_id = s.id AND lc.check_date <= ${P('day')} ORDER BY lc.check_date DESC, lc.id DESC LIMIT 1)
    WHERE ${hooks.inIds(sql.ref('s.id'), P('ids'))} AND ${visible(tx.shape, tx.ctx.catalog.lookup('assets'), 's', 'probe')}`,
  { ids: hooks.idList(standards), day });
  const found = new Map(rows.map((r) => [Number(r.id), r]));
  if (standards.some((s) => s === asset || !found.has(s))) throw invalidValue('standard_ids');
  for (const standard of standards) {
    const s = found.get(standard)!;
    const stored = s.day === null ? undefined : { day: s.day, result: String(s.result), next: s.next };
    // One this transaction recorded comes after a stored one of the same day.
    const mine = recordedIn(tx).filter((r) => r.asset === standard && r.day <= day).reduce<Recorded | undefined>((a, r) => (!a || r.day >= a.day ? r : a), undefined);
    const last = mine && (!stored || mine.day >= stored.day) ? mine : stored;
    const fine = last ? last.result !== 'fail' && (last.next === null || last.next >= day)
      : s.status !== OUT_OF_TOLERANCE && (s.next_check === null || s.next_check >= day);
    if (!fine) throw dataError(`standard asset ${standard} was not in calibration on ${day}`);
  }
}

interface AssetState {
  id: number; company_id: number; status: string; last_check: string | null; next_check: string | null; period: number | null; last_result: string | null;
}

/** A check as the rules about later checks read it. */
interface Recorded { readonly asset?: number; readonly day: string; readonly result: string; readonly next: string | null }

/** The checks this transaction has recorded but not inserted yet (a PUT of many), in order. */
const recorded = new WeakMap<WriteTx, Recorded[]>();
function recordedIn(tx: WriteTx): Recorded[] {
  let list = recorded.get(tx);
  if (!list) recorded.set(tx, (list = []));
  return list;
}

/**
 * Before checks are deleted: each asset's `last_result` becomes that of its latest
 * remaining check (its dates and status stay as they are).
 */
export async function beforeChecksGo(tx: WriteTx, rows: readonly Row[]): Promise<void> {
  const ids = rows.map((r) => Number(r.id));
  const { hooks } = tx.shape;
  for (const asset of [...new Set(rows.map((r) => Number(r.asset_id)))].sort((a, b) => a - b)) {
    const { rows: [state] } = await tx.run<AssetState>('check-asset', () => assetState(tx), { asset });
    const { rows: [left] } = await tx.run<{ result: string }>('latest-remaining-check', () => sql`SELECT result FROM assetchecks
      WHERE asset_id = ${P('asset')} AND NOT (${hooks.inIds(sql.ref('id'), P('gone'))}) ORDER BY check_date DESC, id DESC LIMIT 1`,
    { asset, gone: hooks.idList(ids) });
    if (state) await updateAsset(tx, state, { last_result: left?.result ?? null });
  }
}

/** The asset's row, locked for the rest of the transaction. */
const assetState = (tx: WriteTx) => sql`SELECT t.id, t.company_id, t.status, t.last_check, t.next_check, t.period, t.last_result
    FROM assets AS t WHERE t.id = ${P('asset')} ${tx.shape.hooks.lockMatched}`;

/**
 * Whether a stored check of the asset is dated after `day`. Asked in a statement of its
 * own once the asset is locked: on PostgreSQL a statement reads what had committed when
 * it began, and a check committed while this one waited for the lock must count.
 */
async function laterStored(tx: WriteTx, asset: number, day: string): Promise<boolean> {
  const { rows } = await tx.run('later-check', () => sql`SELECT 1 AS later FROM assetchecks WHERE asset_id = ${P('asset')} AND check_date > ${P('day')} LIMIT 1`,
    { asset, day });
  return rows.length > 0;
}

/**
 * The asset follows a check that is its latest (dated on or after its last check):
 * `last_check` takes the check's date; a good check sets `next_check` (the body's, or
 * the date plus the asset's period) and brings an out-of-tolerance asset back to
 * Active; a failed one marks it out of tolerance. A back-dated check is history only.
 * The check keeps the next check it set (null when none). The asset's row is locked
 * first, so concurrent checks of one asset take turns.
 */
export async function followHistory(tx: WriteTx, record: Row): Promise<void> {
  const day = String(record.check_date);
  const { rows: [asset] } = await tx.run<AssetState>('check-asset', () => assetState(tx), { asset: record.asset_id });
  const sent = record.next_check ?? null;
  if (!asset) throw dataError(`assets record ${record.asset_id} is gone`);
  // The latest by date, then id: a new check comes after every stored one and those recorded before it here.
  const latest = !recordedIn(tx).some((r) => r.asset === asset.id && r.day > day) && !(await laterStored(tx, asset.id, day));
  const result = String(record.result);
  if (asset.last_check !== null && day < asset.last_check) {
    if (sent !== null) throw invalidValue('next_check');
    record.next_check = null;
    await updateAsset(tx, asset, latest ? { last_result: result } : {});
    recordedIn(tx).push({ asset: asset.id, day, result, next: null });
    return;
  }
  const changes: Row = { last_check: day, ...(latest ? { last_result: result } : {}) };
  if (record.result === 'fail') {
    changes.status = OUT_OF_TOLERANCE;
    record.next_check = null;
  } else {
    const next = sent ?? (asset.period === null ? null : addMonths(day, Number(asset.period)));
    if (next !== null) changes.next_check = next;
    if (asset.status === OUT_OF_TOLERANCE) changes.status = 'Active';
    record.next_check = next;
  }
  await updateAsset(tx, asset, changes);
  recordedIn(tx).push({ asset: asset.id, day, result, next: typeof record.next_check === 'string' ? record.next_check : null });
}

/** Writes the changed columns of the asset, audited as any update of it is. */
async function updateAsset(tx: WriteTx, asset: AssetState, wanted: Row): Promise<void> {
  const old = asset as unknown as Row;
  const changes = Object.fromEntries(Object.entries(wanted).filter(([k, v]) => old[k] !== v));
  const names = Object.keys(changes);
  if (names.length === 0) return;
  const assets = tx.ctx.catalog.lookup('assets');
  const fields = assets.fields.filter((f) => names.includes(f.name));
  await tx.run(`check-moves-asset|${names.join(',')}`, () => sql`UPDATE assets SET ${sql.join(names.map((n) => sql`${sql.ref(n)} = ${P(`v_${n}`)}`))},
    modified = ${P('at')}, version = version + 1 WHERE id = ${P('asset')}`,
  { ...Object.fromEntries(names.map((n) => [`v_${n}`, changes[n]])), at: tx.now, asset: asset.id });
  tx.audit(recordEntry(assets, 'update', old, fieldsJson(fields, old), fieldsJson(fields, changes)));
}

const ROWS = new Param('rows');

/**
 * After new checks are inserted: their standards' link rows, then for each failed
 * check the `assetchecks.failed` event with the checks (and their assets) that used
 * its asset as a standard from the asset's last good check before it up to its date.
 */
export async function afterChecks(tx: WriteTx, records: readonly Row[], ids: readonly number[]): Promise<void> {
  const { hooks } = tx.shape;
  const links = records.flatMap((r, i) => (JSON.parse(String(r.standard_ids)) as number[]).map((asset, position) => [ids[i]!, position, asset]));
  if (links.length > 0) {
    await tx.run('link-standards', () => sql`INSERT INTO assetcheck_standards (check_id, position, asset_id)
      ${hooks.selectRows(ROWS, ['int', 'int', 'int'])}`, { rows: hooks.rowList(links) });
  }
  const def = tx.ctx.catalog.lookup('assetchecks');
  for (const [i, r] of records.entries()) {
    if (r.result !== 'fail') continue;
    const impacted = await impactOf(tx, Number(r.asset_id), String(r.check_date));
    await emitEvents(tx.db, hooks, def, { op: 'failed', event: 'assetchecks.failed' }, [ids[i]!], [
      { name: 'impacted_check_ids', type: 'embed', value: hooks.cast(JSON.stringify(impacted.checks), 'json') },
      { name: 'impacted_asset_ids', type: 'embed', value: hooks.cast(JSON.stringify(impacted.assets), 'json') },
    ]);
  }
}

/** The checks of other assets that used `standard` with a date from its last good check before `day` up to `day`. */
export async function impactOf(tx: WriteTx, standard: number, day: string): Promise<{ checks: number[]; assets: number[] }> {
  const { rows: [good] } = await tx.run<{ check_date: string }>('last-good-check', () => sql`SELECT check_date FROM assetchecks
    WHERE asset_id = ${P('asset')} AND result <> 'fail' AND check_date < ${P('day')} ORDER BY check_date DESC, id DESC LIMIT 1`,
  { asset: standard, day });
  const { rows } = await tx.run<{ id: number; asset_id: number }>('impacted-checks', () => sql`SELECT DISTINCT c.id, c.asset_id
    FROM assetcheck_standards AS l JOIN assetchecks AS c ON c.id = l.check_id
    WHERE l.asset_id = ${P('asset')} AND c.asset_id <> ${P('asset')} AND c.check_date <= ${P('day')} AND c.check_date >= ${P('from')}
    ORDER BY c.id`, { asset: standard, day, from: good?.check_date ?? '0000-00-00' });
  const checks = rows.map((r) => Number(r.id));
  const assets = [...new Set(rows.map((r) => Number(r.asset_id)))].sort((a, b) => a - b);
  return { checks, assets };
}
