// The asset list: the scope's assets a page at a time, searched, filtered and
// sorted through the engine's own filters, and the same selection as CSV.
import type { FastifyInstance } from 'fastify';
import { allows } from '../../auth/access.ts';
import { ask, type Asker, type EngineDeps } from '../engine.ts';
import { DUE_TEXT, dueState } from '../due.ts';
import { render } from '../render.ts';
import { signedIn } from '../visit.ts';
import { assetFilters, assetLink, assetOrder, type AssetQuery, assetSearch, readAssetQuery, RESULTS, SORTS } from './asset-query.ts';
import { homeCompany } from './common.ts';
import type { PageDeps } from './deps.ts';

export interface AssetRecord {
  readonly id: number;
  readonly asset_no: string;
  readonly serial_no: string;
  readonly description: string;
  readonly status: string;
  readonly next_check: string | null;
  readonly last_check: string | null;
  readonly last_result: string | null;
  readonly location: { readonly description: string | null } | null;
  readonly department: { readonly description: string | null } | null;
  readonly company: { readonly name: string | null } | null;
  readonly [key: string]: unknown;
}

/** The page of assets that the list's selection `q` (search, filters, order, page) asks for, and the window it was judged by. */
export async function selectedAssets(engine: EngineDeps, who: Asker, q: AssetQuery) {
  const { window: w } = await homeCompany(engine, who);
  const answer = await ask<AssetRecord[]>(engine, who, {
    verb: 'GET', endpoint: 'assets', filters: [...assetFilters(q, w), ['page=', String(q.page)]], anyOf: assetSearch(q), order: assetOrder(q),
  });
  return { ...answer, window: w };
}

export function assetsPage(app: FastifyInstance, { engine }: PageDeps): void {
  app.get('/assets', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const q = readAssetQuery(req.query);
    const { response, pagination, window: w } = await selectedAssets(engine, who, q);
    const pages = pagination?.total_pages ?? 0;
    const sortLinks = SORTS.map(([key, label]) => {
      const active = q.sort === key;
      const dir = active && q.dir === 'asc' ? 'desc' : 'asc';
      return { key, label, href: assetLink('/assets', q, { sort: key, dir, page: 1 }), active,
        sorted: active ? (q.dir === 'asc' ? 'ascending' : 'descending') : null };
    });
    return render(reply, req.visit, 'assets', 'Assets', 'assets', {
      q, total: pagination?.total_records ?? 0, results: RESULTS, sortLinks,
      assets: response.map((a) => ({ ...a, state: dueState(a.next_check, w) })), stateText: DUE_TEXT,
      csv: assetLink('/assets.csv', q, { page: '' }), labels: allows(who.principal, 'user') ? assetLink('/labels', q) : null,
      pager: { page: q.page, pages, prev: q.page > 1 ? assetLink('/assets', q, { page: q.page - 1 }) : null,
        next: q.page < pages ? assetLink('/assets', q, { page: q.page + 1 }) : null },
    });
  });

  app.get('/assets.csv', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const q = readAssetQuery(req.query);
    const { window: w } = await homeCompany(engine, who);
    const { file } = await ask(engine, who, { verb: 'GET', endpoint: 'assets', filters: assetFilters(q, w), anyOf: assetSearch(q), order: assetOrder(q),
      csv: true });
    return reply.headers(file!.headers).header('content-disposition', 'attachment; filename="assets.csv"').send(file!.stream);
  });
}
