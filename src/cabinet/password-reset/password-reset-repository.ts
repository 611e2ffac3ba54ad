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

export async function markUsed(db: Db, tokenHash: Uint8Array, at: Date): Promise<void> {
  await db.updateTable('cabinet_password_resets').set({ used_at: at }).where('token_hash', '=', tokenHash).execute();
}
