// POST /3.0/password/<user filter> sets the password of every matched user
// (spec §7.14). Below admin, a session may only match its own user.
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN } from '../auth/passwords.ts';
import { endUserSessions } from '../auth/sessions.ts';
import { recordEntry } from '../engine/audit.ts';
import { bodyObjects } from '../engine/body.ts';
import { counts, type Endpoint } from '../engine/endpoint.ts';
import { parseQuery } from '../engine/query.ts';
import { inWriteTx, matchRows } from '../engine/write.ts';
import { accessDenied, filterRequired, invalidField, invalidValue } from '../errors.ts';
import { jsonObjectText } from '../model/json.ts';
import { users } from './users.ts';

export const passwordEndpoint: Endpoint = {
  name: 'password',
  access: { POST: 'readonly' },
  handlers: {
    async POST(c) {
      const { ctx } = c;
      const query = parseQuery(users.def, 'POST', c.segments, undefined, ctx.catalog.lookup, ctx.limits);
      if (query.conditions.length === 0) throw filterRequired('password', 'POST');
      const [body] = bodyObjects(c.json(), 'POST');
      for (const k of body!.entries.keys()) if (k !== 'new_password') throw invalidField(k);
      const password = body!.entries.get('new_password');
      if (typeof password !== 'string' || [...password].length < PASSWORD_MIN || [...password].length > PASSWORD_MAX) {
        throw invalidValue('new_password');
      }
      const { session, level } = ctx.principal;
      const n = await inWriteTx(ctx, async (tx) => {
        const rows = await matchRows(tx, users.def, query);
        if (session && level !== 'admin' && rows.some((r) => r.id !== session.userId)) throw accessDenied('POST', 'password', 'admin');
        for (const row of rows) {
          const hash = await hashPassword(password);
          await tx.db.updateTable('users').set({ password_hash: hash, password_last_changed: tx.today, modified: tx.now })
            .where('id', '=', Number(row.id)).execute();
          await endUserSessions(tx.db, Number(row.id), session && row.id === session.userId ? session.id : null);
          tx.audit(recordEntry(users.def, 'update', row, jsonObjectText([['password', '"***"']]),
            jsonObjectText([['password', '"***"'], ['password_last_changed', JSON.stringify(tx.today)]])));
        }
        return rows.length;
      });
      return { response: counts('records_updated', n, 'records_found', n) };
    },
  },
};
