// SQL of the second factor: the user's sealed TOTP secret and last accepted step,
// and their one-time recovery codes (SHA-256 hashes).
import type { Executor } from '../../db/transaction.ts';
import type { CabinetTables } from '../cabinet-tables.ts';

type Db = Executor<CabinetTables>;

export async function setTotp(
  db: Db,
  userId: string,
  values: { totp_secret_sealed: string | null; totp_enabled_at: Date | null; totp_last_step: string | null },
): Promise<void> {
  await db.updateTable('users').set(values).where('id', '=', userId).execute();
}

/** Takes `step` as the last accepted one only if it is newer than the last: false for a replayed code. */
export async function advanceLastStep(db: Db, userId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ totp_last_step: String(step) })
    .where('id', '=', userId)
    .where((where) => where.or([where('totp_last_step', 'is', null), where('totp_last_step', '<', String(step))]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function replaceRecoveryCodes(db: Db, userId: string, hashes: readonly Uint8Array[]): Promise<void> {
  await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
  if (hashes.length > 0)
    await db
      .insertInto('user_recovery_codes')
      .values(hashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null })))
      .execute();
}

/** Marks an unused code used; false when there is no such unused code. */
export async function useRecoveryCode(db: Db, userId: string, hash: Uint8Array, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('user_recovery_codes')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function unusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('user_recovery_codes')
    .select((select) => select.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
