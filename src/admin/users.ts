// The operator's list of users: who may log in where, at which level.
// Password hashes stay in the database; only whether a user has a password shows.
import { levelOf } from '../auth/access.ts';
import { verifyPassword } from '../auth/passwords.ts';
import type { Database } from '../db/database.ts';
import type { Level } from '../model/types.ts';

export interface UserInfo {
  readonly id: number;
  readonly companyId: number;
  readonly username: string;
  readonly email: string;
  readonly level: Level;
  readonly canCreateCompanies: boolean;
  readonly reminders: boolean;
  readonly hasPassword: boolean;
}

/** Every user, or those of one company, by id. */
export async function listUsers(database: Database, companyId: number | null = null): Promise<UserInfo[]> {
  let q = database.db.selectFrom('users').select(['id', 'company_id', 'username', 'email', 'permissions', 'reminders', 'password_hash']);
  if (companyId !== null) q = q.where('company_id', '=', companyId);
  const rows = await q.orderBy('id').execute();
  return rows.map((r) => {
    const { level, canCreateCompanies } = levelOf(r.permissions);
    return {
      id: Number(r.id), companyId: Number(r.company_id), username: r.username, email: r.email, level, canCreateCompanies,
      reminders: Number(r.reminders) === 1, hasPassword: r.password_hash !== null,
    };
  });
}

/** Whether `password` is the user's current one (asked before a user changes their own). */
export async function passwordMatches(database: Database, userId: number, password: string): Promise<boolean> {
  const row = await database.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
  return verifyPassword(password, row?.password_hash ?? null);
}
