// SQL of password-reset links: one row per link, its token stored only as SHA-256.
import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../db/transaction.ts';
import type { CabinetTables } from '../cabinet-tables.ts';

type Db = Executor<CabinetTables>;
export type PasswordResetRow = Selectable<CabinetTables['cabinet_password_resets']>;

export async function insertReset(db: Db, row: Insertable<CabinetTables['cabinet_password_resets']>): Promise<void> {
  await db.insertInto('cabinet_password_resets').values(row).execute();
}

/** The link of this hash if unused and not expired at `now`; locked when `lock` (the reset that uses it). */
export function findUsableReset(
  db: Db,
  tokenHash: Uint8Array,
  now: Date,
  lock = false,
): Promise<PasswordResetRow | undefined> {
  const query = db
    .selectFrom('cabinet_password_resets')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

export async function markAllUsed(db: Db, userId: string, at: Date): Promise<void> {
  await db
    .updateTable('cabinet_password_resets')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

/** Whether the user was sent a link after `since` (the mail-flood guard). */
export async function linkSentSince(db: Db, userId: string, since: Date): Promise<boolean> {
  const row = await db
    .selectFrom('cabinet_password_resets')
    .select('created_at')
    .where('user_id', '=', userId)
    .where('created_at', '>', since)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
