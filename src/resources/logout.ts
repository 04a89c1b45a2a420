// GET /3.0/logout ends the session in the Authorization header.
import { endSession } from '../auth/sessions.ts';
import { insertAudit } from '../engine/audit.ts';
import { invalidFilter, noSession } from '../errors.ts';
import { formatDatetime } from '../model/dates.ts';
import type { Endpoint } from '../engine/types.ts';

export const logoutEndpoint: Endpoint = {
  name: 'logout',
  access: { GET: 'readonly' },
  handlers: {
    async GET(c) {
      const { ctx } = c;
      const session = ctx.principal.session;
      if (!session) throw noSession();
      if (c.segments.length > 0) throw invalidFilter(c.segments[0]!);
      await ctx.database.transaction(async (trx) => {
        await endSession(trx, session.id);
        await insertAudit(ctx, trx, formatDatetime(ctx.clock.now()), [{
          endpoint: 'logout', action: 'logout', recordId: session.userId, companyId: session.companyId,
          message: `Logout of users record ${session.userId}`,
        }]);
      });
      return { response: '{"message":"Session logged out"}' };
    },
  },
};
