// Printable QR labels (users and admins): /labels shows the asset list's current
// selection with a box ticked for each asset, and the form asks /labels.pdf for the
// ticked ones — a PDF of A4 label sheets whose QR codes open each asset's public
// status page. Plain links and a form: it works without JavaScript. An asset of
// another company is a missing one: 404, and no PDF.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { labelSecret, statusToken } from '../../admin/labels.ts';
import { allows } from '../../auth/access.ts';
import { accessDenied, ApiError, notFound } from '../../errors.ts';
import { askEach, type Asker } from '../engine.ts';
import { type Label, labelSheets } from '../label-sheet.ts';
import { render } from '../render.ts';
import { signedIn, type Visit } from '../visit.ts';
import { assetLink, readAssetQuery } from './asset-query.ts';
import { type AssetRecord, selectedAssets } from './assets.ts';
import { type PageDeps, wholeNumber } from './deps.ts';
import type { FastifyReply } from 'fastify';

/** Ten sheets: what one PDF holds at most. */
export const MAX_LABELS = 240;

/** The signed-in user when their level may print labels (user, admin); else the API's kind of 403. */
function labeller(visit: Visit, reply: FastifyReply): Asker | null {
  const who = signedIn(visit, reply);
  if (who && !allows(who.principal, 'user')) throw accessDenied('GET', 'labels', 'user');
  return who;
}

/** The ids asked for, in their order, once each; a value that is no id is an error of the request. */
function idsOf(query: unknown): number[] {
  const raw = (query as Record<string, unknown> | undefined)?.id;
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const ids = values.map((v) => wholeNumber(typeof v === 'string' ? v : undefined));
  if (ids.some((id) => id === null)) throw new ApiError(400, 'invalid_value', 'An asset to label is not an asset id.');
  const unique = [...new Set(ids as number[])];
  if (unique.length === 0) throw new ApiError(400, 'invalid_value', 'Choose at least one asset to label.');
  if (unique.length > MAX_LABELS) throw new ApiError(400, 'invalid_value', `At most ${MAX_LABELS} labels at once (ten sheets); choose fewer assets.`);
  return unique;
}

const origin = (req: FastifyRequest) => `https://${req.headers.host ?? 'localhost'}`;

export function labelPages(app: FastifyInstance, { engine }: PageDeps): void {
  app.get('/labels', async (req, reply) => {
    const who = labeller(req.visit, reply);
    if (!who) return reply;
    const q = readAssetQuery(req.query);
    const { response, pagination } = await selectedAssets(engine, who, q);
    const pages = pagination?.total_pages ?? 0;
    return render(reply, req.visit, 'assets', 'Labels', 'labels', {
      assets: response, total: pagination?.total_records ?? 0, back: assetLink('/assets', q),
      pager: { page: q.page, pages, prev: q.page > 1 ? assetLink('/labels', q, { page: q.page - 1 }) : null,
        next: q.page < pages ? assetLink('/labels', q, { page: q.page + 1 }) : null },
    });
  });

  app.get('/labels.pdf', async (req, reply) => {
    const who = labeller(req.visit, reply);
    if (!who) return reply;
    const ids = idsOf(req.query);
    const found = new Map<number, AssetRecord>();
    for await (const batch of askEach<AssetRecord>(engine, who, { endpoint: 'assets', anyOf: [ids.map((id) => ['id=', String(id)] as const)] })) {
      for (const a of batch) found.set(a.id, a);
    }
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw notFound(`Asset ${missing} does not exist`);
    const secret = await labelSecret(engine.database, engine.clock);
    const labels: Label[] = ids.map((id) => {
      const a = found.get(id)!;
      return { assetNo: a.asset_no, description: a.description ?? '', nextCheck: a.next_check, url: `${origin(req)}/s/${statusToken(secret, id)}` };
    });
    return reply.type('application/pdf').header('content-disposition', 'inline; filename="labels.pdf"').send(labelSheets(labels, 'Asset labels'));
  });
}
