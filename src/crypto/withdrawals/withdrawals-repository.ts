// SQL of cabinet withdrawals and their per-shop settings.
import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import { newestFirstPage } from '../../db/list-page.ts';
import type { WithdrawalStatus, WithdrawalTables } from './withdrawals-tables.ts';

export type WithdrawalRow = Selectable<WithdrawalTables['crypto_withdrawals']>;

export async function approvalRequired(db: Executor<WithdrawalTables>, shopId: string): Promise<boolean> {
  const row = await db
    .selectFrom('crypto_withdrawal_settings')
    .select('approval_required')
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
  return row?.approval_required ?? false;
}

export async function saveApprovalRequired(
  db: Executor<WithdrawalTables>,
  shopId: string,
  required: boolean,
  at: Date,
): Promise<void> {
  await db
    .insertInto('crypto_withdrawal_settings')
    .values({ shop_id: shopId, approval_required: required, updated_at: at })
    .onConflict((oc) => oc.column('shop_id').doUpdateSet({ approval_required: required, updated_at: at }))
    .execute();
}

export async function insertWithdrawal(
  tx: Tx<WithdrawalTables>,
  row: Insertable<WithdrawalTables['crypto_withdrawals']>,
): Promise<WithdrawalRow> {
  return tx.insertInto('crypto_withdrawals').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The unique index on (merchant_id, chain, external_id) (migration 0024): it decides between concurrent requests. */
export const WITHDRAWAL_EXTERNAL_ID_INDEX = 'crypto_withdrawals_external_id_key';

export async function findByExternalId(
  db: Executor<WithdrawalTables>,
  merchantId: string,
  chain: WithdrawalRow['chain'],
  externalId: string,
): Promise<WithdrawalRow | undefined> {
  return db
    .selectFrom('crypto_withdrawals')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('chain', '=', chain)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

export async function findWithdrawal(
  db: Executor<WithdrawalTables>,
  withdrawalId: string,
): Promise<WithdrawalRow | undefined> {
  return db.selectFrom('crypto_withdrawals').selectAll().where('id', '=', withdrawalId).executeTakeFirst();
}

export async function lockWithdrawal(
  tx: Tx<WithdrawalTables>,
  withdrawalId: string,
): Promise<WithdrawalRow | undefined> {
  return tx.selectFrom('crypto_withdrawals').selectAll().where('id', '=', withdrawalId).forUpdate().executeTakeFirst();
}

export async function updateWithdrawal(
  tx: Tx<WithdrawalTables>,
  withdrawalId: string,
  changes: Partial<
    Pick<
      WithdrawalRow,
      | 'outgoing_transfer_id'
      | 'tx_hash'
      | 'error_code'
      | 'error_message'
      | 'network_fee_actual_micro'
      | 'decided_by'
      | 'decided_at'
      | 'reject_reason'
      | 'completed_at'
    >
  > & { status: WithdrawalStatus; updated_at: Date },
): Promise<WithdrawalRow> {
  return tx
    .updateTable('crypto_withdrawals')
    .set(changes)
    .where('id', '=', withdrawalId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listWithdrawals(
  db: Executor<WithdrawalTables>,
  query: { limit: number; merchantId?: string | undefined; status?: WithdrawalStatus | undefined },
): Promise<WithdrawalRow[]> {
  let builder = db.selectFrom('crypto_withdrawals').selectAll();
  if (query.merchantId !== undefined) builder = builder.where('merchant_id', '=', query.merchantId);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  return newestFirstPage(builder, query);
}
