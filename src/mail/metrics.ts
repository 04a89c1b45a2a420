// E-mail metrics: each delivery attempt's result by kind, and the backlog (mail
// waiting for its first attempt or a retry), read from the table when scraped.
import { Counter } from 'prom-client';
import { registry, sampledGauge } from '../metrics.ts';

export const mailAttempts = new Counter({
  name: 'asset_tracker_mail_attempts_total', help: 'E-mail delivery attempts, by kind (digest, weekly, test) and result (delivered, retrying, failed)',
  labelNames: ['kind', 'result'] as const, registers: [registry],
});

let backlog: (() => Promise<number>) | null = null;

/** The running sender's backlog is what the gauge shows. */
export const watchMailBacklog = (read: () => Promise<number>) => { backlog = read; };

sampledGauge({ name: 'asset_tracker_mail_backlog', help: 'E-mails waiting for their first attempt or a retry' },
  () => (backlog ? backlog() : 0));
