// Checks of assets: calibration, verification and inspection records. A check is a
// record of fact: its points give its result (check-points.ts), the reference
// standards it used must have been in calibration on its date, and the asset follows
// its latest check (asset-history.ts) in the same transaction.
import { dataError, invalidValue } from '../errors.ts';
import { JsonNumber, type JsonValue, parseJson } from '../model/json.ts';
import type { Row } from '../model/types.ts';
import { readPoints, resultOf, pointsJson, RESULTS } from './check-points.ts';
import { afterChecks, beforeChecksGo, checkStandards, followHistory, placeOf, STANDARDS_LINK } from './asset-history.ts';
import { CHECK_LIST } from './printed-lists.ts';
import { ALL_VERBS, ASSET_SHORT, data, embed, id, modified, text, USER_CREATES, version } from './fields.ts';
import type { Resource, WriteTx } from '../engine/types.ts';

const MAX_STANDARDS = 50;
const INTEGER = /^(0|[1-9]\d*)$/;
/** What a correction may not name: the fact itself. */
const FACTS = ['check_type', 'check_date', 'result', 'points', 'standard_ids', 'next_check'];

/** `standard_ids` as sent: an array of ids (integers or integer strings), without repeats. */
function readStandardIds(text: string): number[] {
  const v: JsonValue = parseJson(text);
  const refuse = () => invalidValue('standard_ids');
  if (!Array.isArray(v) || v.length > MAX_STANDARDS) throw refuse();
  const ids = v.map((x) => {
    const raw = x instanceof JsonNumber ? x.text : typeof x === 'string' ? x : null;
    const n = raw !== null && INTEGER.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) throw refuse();
    return n;
  });
  if (new Set(ids).size !== ids.length) throw refuse();
  return ids;
}

/** Each field's own value, read with the body: the points and their verdicts, the result's name, the standards' list. */
function validate(values: Row, mode: 'create' | 'update'): void {
  if (mode === 'update') return;
  if (typeof values.points === 'string') values.points = pointsJson(readPoints(values.points));
  const sent = values.result;
  if (sent !== undefined && (typeof sent !== 'string' || !(RESULTS as readonly string[]).includes(sent))) throw invalidValue('result');
  if (typeof values.standard_ids === 'string') values.standard_ids = JSON.stringify(readStandardIds(values.standard_ids));
}

/**
 * The rules between fields, once every record of the body is read: the result its
 * points give (a different one sent is refused; without points one is required), and
 * a next check only after the check's date and never with a failure.
 */
function settleResult(record: Row): void {
  const computed = resultOf(readPoints(String(record.points)));
  const sent = record.result;
  if ((computed === null && (sent === undefined || sent === null)) || (computed !== null && sent !== undefined && sent !== computed)) {
    throw invalidValue('result');
  }
  record.result = computed ?? sent!;
  const next = record.next_check;
  const day = record.check_date;
  if (next !== undefined && next !== null && (record.result === 'fail' || (typeof day === 'string' && String(next) <= day))) throw invalidValue('next_check');
}

/** The check's place (its asset's company), its type, and a date not after today where the asset is. */
async function beforeCreate(tx: WriteTx, record: Row): Promise<void> {
  settleResult(record);
  const place = typeof record.asset_id === 'number' ? await placeOf(tx, record.asset_id) : null;
  if (!place) throw invalidValue('asset_id');
  record.company_id = place.companyId;
  const { types, today } = place;
  if (typeof record.check_type !== 'string' || !types.has(record.check_type)) throw invalidValue('check_type');
  if (typeof record.check_date === 'string' && record.check_date > today) throw invalidValue('check_date');
}

/** The certificate is a file of the same asset; the standards are other assets in scope, in calibration on the day. */
async function beforeInsert(tx: WriteTx, record: Row): Promise<void> {
  await refuseOtherAssetsFile(tx, record.file_id, record.asset_id);
  await checkStandards(tx, Number(record.asset_id), JSON.parse(String(record.standard_ids)) as number[], String(record.check_date));
  await followHistory(tx, record);
}

/** A correction names no fact; a certificate it names is a file of the check's asset. */
async function beforeUpdate(tx: WriteTx, old: Row, changes: Row): Promise<void> {
  if (FACTS.some((f) => changes[f] !== undefined)) {
    throw dataError(`assetchecks record ${old.id} is a record of fact; record a new check instead`);
  }
  await refuseOtherAssetsFile(tx, changes.file_id, old.asset_id);
}

async function refuseOtherAssetsFile(tx: WriteTx, fileId: Row[string] | undefined, assetId: Row[string] | undefined): Promise<void> {
  if (fileId === null || fileId === undefined) return;
  const file = await tx.find(tx.ctx.catalog.lookup('files'), Number(fileId));
  if (!file || Number(file.asset_id) !== Number(assetId)) throw invalidValue('file_id');
}

export const assetchecks: Resource = {
  def: {
    name: 'assetchecks', table: 'assetchecks', verbs: ALL_VERBS, scopeColumn: 'company_id', access: USER_CREATES,
    fields: [
      id,
      { name: 'company_id', type: 'int' },
      { name: 'asset_id', type: 'int', writable: 'create', required: true, references: { resource: 'assets', rule: 'same-company', onDelete: 'restrict' } },
      text('check_type', { default: 'calibration' }),
      { name: 'check_date', type: 'date', writable: 'always', required: true },
      text('performed_by'),
      text('certificate_no'),
      { name: 'result', type: 'string', writable: 'always' },
      { name: 'points', type: 'json', writable: 'always', default: '[]', csvText: true },
      { name: 'standard_ids', type: 'json', writable: 'always', default: '[]', csvText: true },
      { name: 'file_id', type: 'int', nullable: true, writable: 'always', references: { resource: 'files', rule: 'same-company', onDelete: 'restrict' } },
      { name: 'next_check', type: 'date', nullable: true, writable: 'always' },
      data,
      { name: 'created', type: 'datetime', default: 'now' },
      modified, version,
    ],
    relations: [
      embed('asset', 'assets', 'asset_id', 'null', ASSET_SHORT),
      embed('file', 'files', 'file_id'),
      { name: 'standards', resource: 'assets', through: STANDARDS_LINK, empty: 'nulls', fields: ASSET_SHORT },
    ],
    // A failed check raises `assetchecks.failed` with the checks that relied on the asset as a standard.
    events: { notices: ['failed'] },
    audit: { asset: 'asset_id', file: 'file_id' },
  },
  hooks: {
    validate: (_ctx, values, mode) => validate(values, mode),
    beforeCreate,
    beforeInsert,
    beforeUpdate,
    afterInsert: afterChecks,
    beforeDelete: beforeChecksGo,
  },
  printed: CHECK_LIST,
};
