// Every page of the portal, one file each.
import type { FastifyInstance } from 'fastify';
import { accountPages } from './account.ts';
import { assetPage } from './asset.ts';
import { assetsPage } from './assets.ts';
import { calendarPages } from './calendar.ts';
import { checkPages } from './checks.ts';
import { dashboardPage } from './dashboard.ts';
import type { PageDeps } from './deps.ts';
import { labelPages } from './labels.ts';
import { messagesPage } from './messages.ts';
import { queuePage } from './queue.ts';
import { signInPages } from './sign-in.ts';
import { statusPage } from './status.ts';

export type { PageDeps } from './deps.ts';

export function registerPages(app: FastifyInstance, deps: PageDeps): void {
  for (const register of [signInPages, dashboardPage, assetsPage, assetPage, checkPages, messagesPage, accountPages, queuePage,
    calendarPages, statusPage, labelPages]) register(app, deps);
}
