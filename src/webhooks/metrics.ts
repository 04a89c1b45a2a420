// Webhook metrics: each attempt's result, and the backlog (deliveries waiting or
// to be retried), read from the table when scraped.
import { Counter } from 'prom-client';
import { registry, sampledGauge } from '../metrics.ts';

export const webhookAttempts = new Counter({
  name: 'asset_tracker_webhook_attempts_total', help: 'Webhook delivery attempts, by result (delivered, retrying, failed)',
  labelNames: ['result'] as const, registers: [registry],
});

let backlog: (() => Promise<number>) | null = null;

/** The running dispatcher's backlog is what the gauge shows. */
export const watchBacklog = (read: () => Promise<number>) => { backlog = read; };

sampledGauge({ name: 'asset_tracker_webhook_backlog', help: 'Webhook deliveries waiting for their first attempt or a retry' },
  () => (backlog ? backlog() : 0));
