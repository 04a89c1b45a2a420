// Messages. A message with a null target goes to every user of its
// company; its `message_read` is then per user (table message_reads): a session
// sees and sets its own state, basic mode sees 1 once every recipient has read it.
import { sql } from 'kysely';
import { Param } from '../db/statements.ts';
import { computedContext } from '../engine/context.ts';
import { accessDenied } from '../errors.ts';
import type { ComputedContext, Row } from '../model/types.ts';
import { companyId, data, date, embed, flag, id, modified, version, ref, text, USER_CREATES } from './fields.ts';
import type { Resource, WriteTx } from '../engine/types.ts';

function messageRead(c: ComputedContext) {
  const t = (col: string) => sql.ref(`${c.alias}.${col}`);
  const forCompany = c.level !== 'basic'
    ? sql`(CASE WHEN EXISTS (SELECT 1 FROM message_reads r WHERE r.message_id = ${t('id')} AND r.user_id = ${c.p.user}) THEN 1 ELSE 0 END)`
    : sql`(CASE WHEN EXISTS (SELECT 1 FROM users u WHERE u.company_id = ${t('company_id')} AND NOT EXISTS
        (SELECT 1 FROM message_reads r WHERE r.message_id = ${t('id')} AND r.user_id = u.id)) THEN 0 ELSE 1 END)`;
  return sql`(CASE WHEN ${t('target_user_id')} IS NOT NULL THEN ${t('message_read')} ELSE ${forCompany} END)`;
}

async function effectiveRead(tx: WriteTx, message: Row): Promise<number> {
  const { rows } = await tx.run<{ v: number }>('message-read', () => sql`SELECT ${messageRead(computedContext(tx.shape, 't'))} AS v
    FROM messages t WHERE t.id = ${new Param('id')}`, { id: message.id });
  return Number(rows[0]?.v ?? 0);
}

/** Marks a company-wide message read or unread for the session user, or (basic mode) for all its users. */
async function setCompanyRead(tx: WriteTx, message: Row, read: boolean): Promise<void> {
  const user = tx.ctx.principal.session?.userId;
  const mine = user === undefined ? sql`` : sql`AND user_id = ${user}`;
  if (!read) {
    await sql`DELETE FROM message_reads WHERE message_id = ${message.id} ${mine}`.execute(tx.db);
    return;
  }
  const who = user === undefined ? sql`` : sql`AND u.id = ${user}`;
  await sql`INSERT INTO message_reads (message_id, user_id, company_id, read_at)
    SELECT ${message.id}, u.id, u.company_id, ${tx.now} FROM users u WHERE u.company_id = ${message.company_id} ${who}
    AND NOT EXISTS (SELECT 1 FROM message_reads r WHERE r.message_id = ${message.id} AND r.user_id = u.id)`.execute(tx.db);
}

/**
 * In a session only the user's own messages are visible: addressed to the user or
 * (target null) to the user's company, within their date range; or sent by the user.
 */
function visible(c: ComputedContext) {
  if (c.level === 'basic') return null;
  const t = (col: string) => sql.ref(`${c.alias}.${col}`);
  const { user, userCompany, today } = c.p;
  const inRange = sql`(${t('date_range_start')} IS NULL OR ${t('date_range_start')} <= ${today})
    AND (${t('date_range_end')} IS NULL OR ${t('date_range_end')} >= ${today})`;
  const addressed = sql`(${t('target_user_id')} = ${user} OR (${t('target_user_id')} IS NULL AND ${t('company_id')} = ${userCompany}))`;
  return sql`((${addressed} AND ${inRange}) OR ${t('sender_user_id')} = ${user})`;
}

async function beforeUpdate(tx: WriteTx, old: Row, changes: Row): Promise<void> {
  const p = tx.ctx.principal;
  const isOwn = old.target_user_id === null || old.target_user_id === p.session?.userId;
  if (p.session && p.level !== 'admin' && !isOwn) throw accessDenied('POST', 'messages', 'admin');
  const target = changes.target_user_id !== undefined ? changes.target_user_id : old.target_user_id;
  if (target !== null || changes.message_read === undefined) return;
  // Compare against what the caller sees, so records_updated counts real changes.
  old.message_read = await effectiveRead(tx, old);
  if (changes.message_read !== old.message_read) await setCompanyRead(tx, { ...old, ...changes }, changes.message_read === 1);
}

export const messages: Resource = {
  def: {
    name: 'messages', table: 'messages', verbs: ['GET', 'POST', 'PUT', 'DELETE'], scopeColumn: 'company_id',
    access: { ...USER_CREATES, POST: 'user' }, userPost: ['message_read'], visible,
    fields: [
      id,
      { name: 'sender_user_id', type: 'int', nullable: true, references: { resource: 'users', rule: 'in-scope', onDelete: 'set-null' } },
      ref('target_user_id', 'users', 'set-null'),
      companyId,
      flag('message_read', 0, { computed: messageRead }),
      date('date_range_start'), date('date_range_end'),
      text('messagetext', { maxLength: 10000 }),
      data, modified, version,
    ],
    relations: [embed('sender', 'users', 'sender_user_id'), embed('recipient', 'users', 'target_user_id')],
    events: {},
  },
  hooks: {
    beforeCreate(tx, record) { record.sender_user_id = tx.ctx.principal.session?.userId ?? null; },
    beforeUpdate,
  },
};
