// SQL of the cabinet's people: users and their memberships.
import type { Insertable, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.ts';
import type { CabinetTables } from '../cabinet-tables.ts';
import type { Role } from '../roles.ts';

export type UserRow = Selectable<CabinetTables['users']>;
export type MembershipRow = Selectable<CabinetTables['memberships']>;
type Db = Executor<CabinetTables>;

export async function insertUser(db: Db, row: Insertable<CabinetTables['users']>): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export function findUser(db: Db, userId: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
}

export async function setPasswordHash(db: Db, userId: string, passwordHash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
}

export async function setDisabled(db: Db, userId: string, at: Date | null): Promise<number> {
  const result = await db.updateTable('users').set({ disabled_at: at }).where('id', '=', userId).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function insertMembership(db: Db, row: Insertable<CabinetTables['memberships']>): Promise<void> {
  await db.insertInto('memberships').values(row).execute();
}

export function membershipsOf(db: Db, userId: string): Promise<MembershipRow[]> {
  return db.selectFrom('memberships').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
}

export function findMembership(db: Db, userId: string, merchantId: string): Promise<MembershipRow | undefined> {
  return db
    .selectFrom('memberships')
    .selectAll()
    .where('user_id', '=', userId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

export function membersOf(
  db: Db,
  merchantId: string,
): Promise<Array<MembershipRow & Pick<UserRow, 'email' | 'name' | 'totp_enabled_at' | 'disabled_at'>>> {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .selectAll('memberships')
    .select(['users.email', 'users.name', 'users.totp_enabled_at', 'users.disabled_at'])
    .where('memberships.merchant_id', '=', merchantId)
    .orderBy('memberships.created_at')
    .execute();
}

/** Locks the merchant's owner memberships (the last-owner rule reads them under lock). */
export async function lockedOwnerIds(db: Db, merchantId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('memberships')
    .select('user_id')
    .where('merchant_id', '=', merchantId)
    .where('role', '=', 'owner')
    .forUpdate()
    .execute();
  return rows.map((row) => row.user_id);
}

export async function setRole(db: Db, userId: string, merchantId: string, role: Role): Promise<number> {
  const result = await db
    .updateTable('memberships')
    .set({ role })
    .where('user_id', '=', userId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function deleteMembership(db: Db, userId: string, merchantId: string): Promise<number> {
  const result = await db
    .deleteFrom('memberships')
    .where('user_id', '=', userId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
