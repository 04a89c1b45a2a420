// POST /3.0/password/<user filter> sets the password of every matched user
//. Below admin, a session may only match its own user.
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN } from '../auth/passwords.ts';
import { endUserSessions } from '../auth/sessions.ts';
import { recordEntry } from '../engine/audit.ts';
import { bodyObjects } from '../engine/body.ts';
import { counts } from '../engine/endpoint.ts';
import { parseQuery } from '../engine/query.ts';
import { sql } from 'kysely';
import { checkPrecondition, readIfMatch } from '../engine/precondition.ts';
import { bookkeeping, byIds, inWriteTx, matchIds, rowsOf, setList } from '../engine/write.ts';
import { exceeds } from '../auth/access.ts';
import { accessDenied, filterRequired, forbidden, invalidField, invalidValue } from '../errors.ts';
import type { Row } from '../model/types.ts';
import { jsonObjectText } from '../model/json.ts';
import { users } from './users.ts';
import type { Endpoint, WriteTx } from '../engine/types.ts';

/** Stores a password hash for a user (audited as `***`) and ends the user's other sessions. */
export async function storePassword(tx: WriteTx, user: Row, hash: string): Promise<void> {
  const session = tx.ctx.principal.session;
  await sql`UPDATE users SET password_hash = ${hash}, password_last_changed = ${tx.today}, ${setList(bookkeeping(users.def, sql`${tx.now}`))}
    WHERE id = ${Number(user.id)}`.execute(tx.db);
  await endUserSessions(tx.db, Number(user.id), session && user.id === session.userId ? session.id : null);
  tx.audit(recordEntry(users.def, 'update', user, jsonObjectText([['password', '"***"']]),
    jsonObjectText([['password', '"***"'], ['password_last_changed', JSON.stringify(tx.today)]])));
}

export const passwordEndpoint: Endpoint = {
  name: 'password',
  access: { POST: 'readonly' },
  handlers: {
    async POST(c) {
      const { ctx } = c;
      const query = parseQuery(users.def, 'POST', c, undefined, ctx.catalog.lookup, ctx.limits);
      if (query.conditions.length === 0) throw filterRequired('password', 'POST');
      const [body] = bodyObjects(c.json(), 'POST');
      for (const k of body!.entries.keys()) if (k !== 'new_password') throw invalidField(k);
      const password = body!.entries.get('new_password');
      if (typeof password !== 'string' || [...password].length < PASSWORD_MIN || [...password].length > PASSWORD_MAX) {
        throw invalidValue('new_password');
      }
      const p = ctx.principal;
      // Hashed once, before the transaction: scrypt is slow on purpose and must not hold the database.
      const hash = await hashPassword(password);
      const reply = (n: number) => ({ response: counts('records_updated', n, 'records_found', n) });
      const pre = readIfMatch(c.ifMatch);
      const n = await inWriteTx(ctx, async (tx) => {
        const ids = await matchIds(tx, users.def, query);
        if (pre) await checkPrecondition(tx, users.def, query, byIds(tx, ids), pre);
        const rows = await rowsOf(tx, users.def, ids);
        const others = rows.filter((r) => r.id !== p.session?.userId);
        if (p.session && p.level !== 'admin' && others.length > 0) throw accessDenied('POST', 'password', 'admin');
        // Setting someone's password is becoming them: not for a user with more rights than the caller.
        if (others.some((r) => exceeds(r.permissions === null ? null : String(r.permissions), p))) {
          throw forbidden('Access denied: a session cannot set the password of a user with rights it does not hold');
        }
        for (const row of rows) await storePassword(tx, row, hash);
        return rows.length;
      }, reply);
      return reply(n);
    },
  },
};
