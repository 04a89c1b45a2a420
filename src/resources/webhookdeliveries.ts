// The delivery log of webhooks (read-only): one record per event and webhook, with
// the outcome of its last attempt, under the webhook's company. Basic mode or admin sessions only.
import type { FieldDef } from '../model/types.ts';
import { ADMIN_ONLY, id } from './fields.ts';
import type { Resource } from '../engine/types.ts';

const int = (name: string, nullable = false): FieldDef => ({ name, type: 'int', nullable });
const text = (name: string, nullable = false): FieldDef => ({ name, type: 'string', nullable });

export const webhookdeliveries: Resource = {
  def: {
    name: 'webhookdeliveries', table: 'webhook_deliveries', verbs: ['GET'], scopeColumn: 'company_id', access: ADMIN_ONLY,
    fields: [
      id, int('webhook_id'), int('company_id'), text('event_id'), text('event'), int('attempt'), text('status'), int('response_status', true),
      text('error', true), { name: 'created', type: 'datetime' }, { name: 'next_attempt', type: 'datetime', nullable: true },
    ],
    relations: [],
  },
};
