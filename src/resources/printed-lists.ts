// The printed lists of assets and of checks (GET with `Accept: application/pdf`):
// their columns over the records as GET gives them. An asset whose next check is
// before today (in the caller's company's time zone) is marked `Overdue`.
import type { Writable } from 'node:stream';
import { JsonNumber, JsonObject, type JsonValue } from '../model/json.ts';
import { type ListColumn, type ListHeading, writeListPdf } from '../print/list-pdf.ts';
import type { PrintedList } from '../engine/types.ts';

/** A member as a cell: strings as they are, numbers as written, null and anything else empty. */
function shown(value: JsonValue | undefined): string | null {
  if (typeof value === 'string') return value;
  return value instanceof JsonNumber ? value.text : null;
}

const own = (name: string) => (r: JsonObject) => shown(r.entries.get(name));
const embedded = (name: string, member: string) => (r: JsonObject) => {
  const e = r.entries.get(name);
  return e instanceof JsonObject ? shown(e.entries.get(member)) : null;
};

const overdue = (r: JsonObject, today: string) => {
  const next = r.entries.get('next_check');
  return typeof next === 'string' && next < today;
};

export const ASSET_LIST: PrintedList = {
  title: 'Assets',
  columns: (today): ListColumn<JsonObject>[] => [
    { heading: 'Asset no', width: 12, cell: own('asset_no') },
    { heading: 'Description', width: 26, cell: own('description') },
    { heading: 'Location', width: 16, cell: embedded('location', 'description') },
    { heading: 'Department', width: 16, cell: embedded('department', 'description') },
    { heading: 'Next check', width: 10, cell: own('next_check') },
    { heading: 'Last result', width: 10, cell: own('last_result') },
    { heading: '', width: 8, cell: (r) => (overdue(r, today) ? 'Overdue' : null) },
  ],
};

export const CHECK_LIST: PrintedList = {
  title: 'Asset checks',
  columns: (): ListColumn<JsonObject>[] => [
    { heading: 'Check date', width: 11, cell: own('check_date') },
    { heading: 'Asset no', width: 14, cell: embedded('asset', 'asset_no') },
    { heading: 'Check type', width: 16, cell: own('check_type') },
    { heading: 'Result', width: 12, cell: own('result') },
    { heading: 'Performed by', width: 24, cell: own('performed_by') },
    { heading: 'Certificate no', width: 23, cell: own('certificate_no') },
  ],
};

/**
 * The assets due list as a PDF, written to `out` (which it ends): the same document
 * GET /3.0/assets answers with `Accept: application/pdf`, for a list read elsewhere
 * (a report sent by e-mail). `rows` are asset records as GET gives them (location
 * and department embedded), in batches; `heading.title` is replaced by the list's own.
 */
export function writeAssetDueListPdf(out: Writable, heading: Omit<ListHeading, 'title'>,
  rows: AsyncIterable<readonly JsonObject[]> | Iterable<readonly JsonObject[]>): Promise<void> {
  return writeListPdf(out, { ...heading, title: ASSET_LIST.title }, ASSET_LIST.columns(heading.today), rows);
}
