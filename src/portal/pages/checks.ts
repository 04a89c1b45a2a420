// Recording a check: a form with any number of points, a first press that shows the
// verdicts and the result the check would get (the endpoint's own arithmetic), and
// saving, which is the assetchecks PUT — so every rule and refusal is the API's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { readPoints, resultOf } from '../../resources/check-points.ts';
import { todayIn } from '../../model/dates.ts';
import { ask, checkAccess, type Asker, type EngineDeps } from '../engine.ts';
import { render } from '../render.ts';
import { signedIn } from '../visit.ts';
import { assetOf } from './asset.ts';
import { CHECK_TYPES, checkBody, type CheckForm, NUMBER_FIELDS, pointsText, readCheckForm, rowsToShow } from './check-form.ts';
import { field, type PageDeps, wholeNumber } from './deps.ts';

type Req = FastifyRequest<{ Params: { id: string } }>;

/** The verdicts of the filled rows, in order, and the check's result; or the endpoint's refusal. */
function preview(f: CheckForm): { verdicts: string[]; result: string | null } {
  const points = readPoints(pointsText(f));
  return { verdicts: points.map((p) => p.verdict), result: resultOf(points) };
}

async function formPage(engine: EngineDeps, who: Asker, req: Req, reply: FastifyReply, f: CheckForm,
  o: { problem?: string; status?: number; shown?: ReturnType<typeof preview> } = {}) {
  const asset = await assetOf(engine, who, wholeNumber(req.params.id));
  return render(reply, req.visit, 'assets', `Record a check of ${asset.asset_no}`, 'check-new', {
    asset, form: f, rows: rowsToShow(f), numberFields: NUMBER_FIELDS, checkTypes: CHECK_TYPES, ...o,
  }, o.status ?? 200);
}

export function checkPages(app: FastifyInstance, { engine }: PageDeps): void {
  app.get<{ Params: { id: string } }>('/assets/:id/checks/new', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    checkAccess(engine, who, 'PUT', 'assetchecks');
    return formPage(engine, who, req, reply, readCheckForm({}, todayIn('UTC', engine.clock.now())));
  });

  app.post<{ Params: { id: string } }>('/assets/:id/checks/new', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    checkAccess(engine, who, 'PUT', 'assetchecks');
    const asset = await assetOf(engine, who, wholeNumber(req.params.id));
    const f = readCheckForm(req.body, todayIn('UTC', engine.clock.now()));
    try {
      if (field(req.body, 'action') !== 'save') return await formPage(engine, who, req, reply, f, { shown: preview(f) });
      await ask(engine, who, { verb: 'PUT', endpoint: 'assetchecks', bodyText: checkBody(f, asset.id) });
    } catch (e) {
      if (!(e instanceof ApiError) || e.status >= 500 || e.status === 403) throw e;
      return formPage(engine, who, req, reply, f, { problem: e.message, status: e.status });
    }
    return reply.redirect(`/assets/${asset.id}`, 303);
  });
}
