// One asset: every field and custom field, its checks with their points and
// verdicts, its files (downloaded through the API's own upload endpoint), its
// reminders and its audit trail. An id outside the scope is a missing one: 404.
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.ts';
import { ask, type Asker, type EngineDeps, mayAsk } from '../engine.ts';
import { DUE_TEXT, dueState } from '../due.ts';
import { render } from '../render.ts';
import { signedIn } from '../visit.ts';
import type { AssetRecord } from './assets.ts';
import { homeCompany } from './common.ts';
import { type PageDeps, wholeNumber } from './deps.ts';

const SHOWN = ['asset_no', 'serial_no', 'description', 'status', 'next_check', 'last_check', 'last_result', 'period', 'date_added', 'modified'];
const LABELS: Readonly<Record<string, string>> = {
  asset_no: 'Asset number', serial_no: 'Serial number', description: 'Description', status: 'Status', next_check: 'Next check',
  last_check: 'Last check', last_result: 'Last result', period: 'Check interval (months)', date_added: 'Added', modified: 'Last changed',
};

const text = (v: unknown): string => (v === null || v === undefined || v === '' ? '—'
  : typeof v === 'string' ? v : JSON.stringify(v));
const ofAsset = (id: number) => [['asset_id=', String(id)] as const];

/** An asset of the scope, or 404 as the API answers for a missing record. */
export async function assetOf(engine: EngineDeps, who: Asker, id: number | null): Promise<AssetRecord> {
  const found = id === null ? [] : (await ask<AssetRecord[]>(engine, who, { verb: 'GET', endpoint: 'assets', filters: [['id=', String(id)]] })).response;
  if (!found[0]) throw notFound(`Asset ${id ?? ''} does not exist`);
  return found[0];
}

export function assetPage(app: FastifyInstance, { engine }: PageDeps): void {
  app.get<{ Params: { id: string } }>('/assets/:id', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const asset = await assetOf(engine, who, wholeNumber(req.params.id));
    const { window: w } = await homeCompany(engine, who);
    const get = <T>(endpoint: string, order: string) => ask<T[]>(engine, who, { verb: 'GET', endpoint, filters: ofAsset(asset.id), order });
    const [checks, reminders, audit] = await Promise.all([
      get<Record<string, unknown>>('assetchecks', 'check_date^,id^'), get<Record<string, unknown>>('assetreminders', 'due_date^,id^'),
      get<Record<string, unknown>>('auditlog', 'id^'),
    ]);
    const fields = SHOWN.map((k) => ({ label: LABELS[k] ?? k, value: text(asset[k]) }));
    fields.push({ label: 'Company', value: text(asset.company?.name) }, { label: 'Location', value: text(asset.location?.description) },
      { label: 'Department', value: text(asset.department?.description) },
      { label: 'Type', value: text((asset.externaltype as { description?: unknown } | null)?.description) });
    const data = asset.data && typeof asset.data === 'object' ? Object.entries(asset.data).map(([k, v]) => ({ label: k, value: text(v) })) : [];
    return render(reply, req.visit, 'assets', `Asset ${asset.asset_no}`, 'asset', {
      asset, state: dueState(asset.next_check, w), stateText: DUE_TEXT, fields, data, text,
      checks: checks.response, reminders: reminders.response, audit: audit.response,
      files: Array.isArray(asset.files) ? asset.files : [], mayRecord: mayAsk(engine, who, 'PUT', 'assetchecks'),
    });
  });

  app.get<{ Params: { id: string } }>('/files/:id', async (req, reply) => {
    const who = signedIn(req.visit, reply);
    if (!who) return reply;
    const id = wholeNumber(req.params.id);
    const found = id === null ? [] : (await ask<{ upload_endpoint: string; upload_uuid: string | null }[]>(engine, who,
      { verb: 'GET', endpoint: 'files', filters: [['id=', String(id)]] })).response;
    if (!found[0]?.upload_uuid) throw notFound(`File ${id ?? ''} does not exist`);
    const token = found[0].upload_endpoint.slice(found[0].upload_endpoint.lastIndexOf('/') + 1);
    const { file } = await ask(engine, who, { verb: 'GET', endpoint: 'upload', filters: [encodeURIComponent(token)] });
    return reply.headers(file!.headers).send(file!.stream);
  });
}
