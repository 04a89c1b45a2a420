// The public page a label's QR code opens: anyone may read it, without signing in,
// and it shows only what a label's reader needs — the asset's number, description,
// company, status, check dates and last result, and whether it is in date. The link
// is signed; a link made up, changed, or made before the secret was replaced is a
// missing page like any other.
import type { FastifyInstance } from 'fastify';
import { assetOfToken, labelSecret, publicStatus } from '../../admin/labels.ts';
import { DUE_TEXT, dueState, dueWindow } from '../due.ts';
import { notFoundPage, render } from '../render.ts';
import type { PageDeps } from './deps.ts';

export function statusPage(app: FastifyInstance, { engine }: PageDeps): void {
  app.get<{ Params: { token: string } }>('/s/:token', async (req, reply) => {
    const id = assetOfToken(await labelSecret(engine.database, engine.clock), req.params.token);
    const asset = id === null ? null : await publicStatus(engine.database, id);
    if (!asset) return notFoundPage(reply, req.visit);
    const state = dueState(asset.nextCheck, dueWindow(asset.companyId, asset.companyData, engine.clock.now()));
    return render(reply, { ...req.visit, companyName: asset.companyName }, 'status', `Asset ${asset.assetNo}`, 'status',
      { asset, state, stateText: DUE_TEXT[state], inDate: state === 'ok' || state === 'due' });
  });
}
