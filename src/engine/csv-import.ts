// CSV import: PUT with `Content-Type: text/csv` creates one record per
// data row, in one transaction, with no 1,000-record limit. The header row names
// any of the export's columns; read-only and embed columns are taken and ignored,
// a leading `'` the export's formula guard added is removed. Every row is checked
// as a JSON PUT of it would be, against the store and the rows before it; one bad
// row (a duplicate unique value included) refuses the file with every bad row
// listed, and nothing is written. `X-Dry-Run: true` checks and writes nothing.
import { ApiError, invalidField, invalidRows, invalidValue, ROW_ERRORS_LISTED, type RowError } from '../errors.ts';
import { JsonNumber, JsonObject, type JsonValue, parseJson } from '../model/json.ts';
import type { FieldDef, ResourceDef } from '../model/types.ts';
import { csvColumns } from './csv.ts';
import { nextTurn, Pacer } from '../model/slices.ts';
import { readBody } from './checks.ts';
import { NewRecords } from './create.ts';
import { inWriteTx } from './write.ts';
import type { Ctx, Reply, Resource } from './types.ts';

/** An RFC 4180 text's rows (CRLF or LF between them; a leading BOM dropped), one at a time. */
export function* csvRows(text: string): Generator<string[], { unterminated: number } | null> {
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  let rows = 0;
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (; at < text.length; at++) {
    const c = text[at]!;
    if (quoted) {
      if (c !== '"') cell += c;
      else if (text[at + 1] === '"') { cell += '"'; at++; } else quoted = false;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\n' || (c === '\r' && text[at + 1] === '\n')) {
      if (c === '\r') at++;
      row.push(cell);
      yield row;
      rows++;
      row = [];
      cell = '';
    } else cell += c;
  }
  if (quoted) return { unterminated: rows };
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    yield row;
  }
  return null;
}

/** What the export's formula guard added: a `'` before `=`, `+`, `-`, `@`, tab, CR or `'`. */
const unguard = (cell: string) => (/^'[=+\-@\t\r']/.test(cell) ? cell.slice(1) : cell);

/** The types declared for the endpoint's `data` keys in the caller's company (`data.custom_fields`). */
async function declaredTypes(ctx: Ctx, def: ResourceDef): Promise<Map<string, string>> {
  const company = await ctx.database.db.selectFrom('companies').select('data').where('id', '=', ctx.principal.companyId).executeTakeFirst();
  const data = company?.data ? parseJson(company.data) : null;
  const fields = data instanceof JsonObject ? data.entries.get('custom_fields') : undefined;
  const mine = fields instanceof JsonObject ? fields.entries.get(def.name) : undefined;
  const out = new Map<string, string>();
  if (!(mine instanceof JsonObject)) return out;
  for (const [key, spec] of mine.entries) {
    const type = spec instanceof JsonObject ? spec.entries.get('type') : undefined;
    if (typeof type === 'string') out.set(key, type);
  }
  return out;
}

const INTEGER = /^-?\d+$/;

/** A cell as the JSON value a field of this type takes: numbers for integers and flags, JSON text parsed, text otherwise. */
function fieldValue(f: FieldDef, cell: string): JsonValue | undefined {
  if (f.csvText) {
    if (cell === '') return undefined;
    try {
      return parseJson(cell);
    } catch {
      throw invalidValue(f.name);
    }
  }
  if (cell === '') return f.nullable ? null : '';
  return (f.type === 'int' || f.type === 'bool') && INTEGER.test(cell) ? new JsonNumber(cell) : cell;
}

/** A `data` cell: text, or the declared type's value (integers, flags) when it reads as one. */
function dataValue(type: string | undefined, cell: string): JsonValue {
  if (type === 'int' && INTEGER.test(cell)) return new JsonNumber(cell);
  if (type === 'bool' && (cell === 'true' || cell === 'false')) return cell === 'true';
  return cell;
}

type Reader = (body: JsonObject, cells: readonly string[]) => void;

/** How each header column fills a record's body (columns it ignores fill nothing). */
function columnReaders(ctx: Ctx, def: ResourceDef, header: readonly string[], types: Map<string, string>): Reader[] {
  const known = new Set(csvColumns(ctx, def).map((c) => c.name));
  const seen = new Set<string>();
  return header.map((name, i): Reader => {
    if (seen.has(name)) throw invalidField(name);
    seen.add(name);
    if (name.startsWith('data.') && def.fields.some((f) => f.name === 'data' && f.type === 'json')) {
      const key = name.slice('data.'.length);
      return (body, cells) => {
        const cell = unguard(cells[i]!);
        if (cell === '') return;
        let data = body.entries.get('data');
        if (!(data instanceof JsonObject)) body.entries.set('data', (data = new JsonObject()));
        data.entries.set(key, dataValue(types.get(key), cell));
      };
    }
    if (!known.has(name)) throw invalidField(name);
    const f = def.fields.find((d) => d.name === name);
    // Read-only fields (id, modified …), computed ones and embeds: taken, ignored.
    if (!f || f.computed || (f.writable !== 'create' && f.writable !== 'always')) return () => {};
    return (body, cells) => {
      const value = fieldValue(f, unguard(cells[i]!));
      if (value !== undefined) body.entries.set(f.name, value);
    };
  });
}

/** The field a refusal names (`… invalid value for X`, `… invalid field X`, `<endpoint> X "…" is already in use`), if any. */
function fieldOf(e: ApiError, def: ResourceDef): string | null {
  const named = /invalid (?:value for|field) (\S+)$/.exec(e.message) ?? new RegExp(`^Data Error: ${def.name} (\\S+) .* is already in use$`).exec(e.message);
  return named?.[1] ?? null;
}

/**
 * Rows read, checked and written a chunk at a time: memory holds one chunk's rows and
 * records, not the file's (a 100,000-row import kept every row's cells until its end:
 * some 100 MB more, promoted through the young generation at every collection).
 */
const CHUNK = 1000;

/** How many rows the text holds (the first pass: what the progress counts against), the event loop given turns; refuses a row left open by a quote. */
async function countRows(text: string, pacer: Pacer): Promise<number> {
  const reading = csvRows(text);
  for (let rows = 0; ; rows++) {
    if (pacer.due()) await nextTurn();
    const r = reading.next();
    if (!r.done) continue;
    if (r.value) throw invalidRows(1, [{ row: r.value.unterminated, field: null, error: 'A quoted cell is never closed' }]);
    return rows;
  }
}

/** The next `n` rows of a reading (fewer at its end), the event loop given turns. */
async function nextRows(reading: Generator<string[], unknown>, n: number, pacer: Pacer): Promise<string[][]> {
  const rows: string[][] = [];
  while (rows.length < n) {
    if (pacer.due()) await nextTurn();
    const r = reading.next();
    if (r.done) break;
    rows.push(r.value);
  }
  return rows;
}

/** A row's refusal, with the field it names. */
const rowError = (row: number, e: unknown, def: ResourceDef): RowError => {
  if (!(e instanceof ApiError)) throw e;
  return { row, field: fieldOf(e, def), error: e.message };
};

/**
 * Creates a record per data row, or (dry run) only checks them; refuses the whole file
 * when any row is bad. `checked` hears each row as its check against the store begins.
 * The rows are read, checked and inserted a chunk at a time in the one transaction;
 * once a row is refused nothing more is inserted, and the transaction rolls back.
 */
export async function importCsv(ctx: Ctx, res: Resource, text: string, dryRun: boolean,
  answer?: (ids: number[]) => Reply, checked?: (rows: number, total: number) => void): Promise<{ ids: number[] } | { valid: number }> {
  const { def } = res;
  const pacer = new Pacer();
  const total = (await countRows(text, pacer)) - 1;
  const reading = csvRows(text);
  const [header] = await nextRows(reading, 1, pacer);
  if (!header) throw invalidRows(1, [{ row: 0, field: null, error: 'No header row' }]);
  const readers = columnReaders(ctx, def, header, await declaredTypes(ctx, def));
  const outcome = await inWriteTx(ctx, async (tx) => {
    const refused: RowError[] = [];
    let refusals = 0;
    let valid = 0;
    const ids: number[] = [];
    const batch = new NewRecords(tx, res, pacer);
    for (let start = 0; start < total; start += CHUNK) {
      const errors: RowError[] = [];
      const bodies: { row: number; values: ReturnType<typeof readBody> }[] = [];
      for (const [i, cells] of (await nextRows(reading, CHUNK, pacer)).entries()) {
        if (pacer.due()) await nextTurn();
        const row = start + i + 1;
        if (cells.length !== header.length) {
          errors.push({ row, field: null, error: `${cells.length} cells where the header has ${header.length}` });
          continue;
        }
        const body = new JsonObject();
        for (const read of readers) read(body, cells);
        try {
          bodies.push({ row, values: readBody(ctx, res, body, 'create') });
        } catch (e) {
          errors.push(rowError(row, e, def));
        }
      }
      const passed = await batch.check(bodies.map((b) => b.values), {
        checking: (i) => checked?.(bodies[i]!.row, total),
        refused: (i, e) => errors.push(rowError(bodies[i]!.row, e, def)),
      });
      valid += passed.length;
      refusals += errors.length;
      refused.push(...errors.sort((a, b) => a.row - b.row).slice(0, Math.max(0, ROW_ERRORS_LISTED - refused.length)));
      if (refusals > 0 || dryRun) continue;
      ids.push(...await batch.insert(passed));
      await tx.flushAudit();
    }
    // Thrown inside the transaction, so that nothing written stays.
    if (refusals > 0) throw invalidRows(refusals, refused);
    if (dryRun) throw new DryRun(valid);
    return { ids };
  }, answer && ((r) => answer(r.ids))).catch((e: unknown) => {
    if (e instanceof DryRun) return { valid: e.valid };
    throw e;
  });
  return outcome;
}

/** Ends a dry run's transaction without writing. */
class DryRun extends Error {
  constructor(readonly valid: number) { super('dry run'); }
}
