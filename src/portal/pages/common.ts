// Reads several pages share, all through the engine as the signed-in user.
import { ask, type Asker, type EngineDeps } from '../engine.ts';
import { type DueWindow, dueWindow } from '../due.ts';

export interface CompanyRecord { readonly id: number; readonly name: string; readonly data: unknown }

/** The user's own company (the root of the scope) and its reminder window. */
export async function homeCompany(engine: EngineDeps, who: Asker): Promise<{ company: CompanyRecord | null; window: DueWindow }> {
  const { response } = await ask<CompanyRecord[]>(engine, who, { verb: 'GET', endpoint: 'companies', filters: [['id=', String(who.principal.companyId)]] });
  const company = response[0] ?? null;
  return { company, window: dueWindow(who.principal.companyId, company?.data ?? null, engine.clock.now()) };
}

/** How many records of an endpoint match the filters (the total of their first page). */
export async function countOf(engine: EngineDeps, who: Asker, endpoint: string, filters: readonly (readonly [string, string])[]): Promise<number> {
  const { pagination } = await ask(engine, who, { verb: 'GET', endpoint, filters });
  return pagination?.total_records ?? 0;
}

/** `YYYY-MM` of the month `n` months after the one of `date`. */
export function monthAfter(date: string, n: number): string {
  const total = Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7)) - 1 + n;
  return `${Math.floor(total / 12)}-${String((total % 12) + 1).padStart(2, '0')}`;
}

const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
export const monthName = (ym: string) => `${MONTH_NAMES[Number(ym.slice(5, 7)) - 1]} ${ym.slice(0, 4)}`;
