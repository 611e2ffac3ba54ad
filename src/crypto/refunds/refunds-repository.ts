// SQL of refunds: the refunds and the deposits each sends back. The deposits
// themselves are receiving's: refund-service.ts reads them through its service.
import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { RefundStatus, RefundTables } from './refunds-tables.ts';

export type RefundRow = Selectable<RefundTables['crypto_refunds']>;

/** What a refund needs to know of a deposit (receiving-service.ts reads it). */
export interface RefundableDeposit {
  readonly id: string;
  readonly chain: RefundRow['chain'];
  readonly status: 'confirming' | 'credited' | 'held' | 'orphaned' | 'unconfirmed';
  readonly amount_micro: bigint;
}

/** A deposit is refunded at most once: this partial unique index decides between concurrent refunds. */
export const REFUND_ONCE_CONSTRAINT = 'crypto_refund_deposits_once_idx';

/** Which of these deposits an active (not failed) refund already sends back. */
export async function refundedDepositIds(
  db: Executor<RefundTables>,
  depositIds: readonly string[],
): Promise<Set<string>> {
  if (depositIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('crypto_refund_deposits')
    .select('deposit_id')
    .where('deposit_id', 'in', depositIds)
    .where('released', '=', false)
    .execute();
  return new Set(rows.map((row) => row.deposit_id));
}

export async function insertRefund(
  tx: Tx<RefundTables>,
  row: Insertable<RefundTables['crypto_refunds']>,
  deposits: readonly RefundableDeposit[],
): Promise<RefundRow> {
  const inserted = await tx.insertInto('crypto_refunds').values(row).returningAll().executeTakeFirstOrThrow();
  // The constraint, not a read before, makes a deposit refundable once: a concurrent refund of it fails here.
  await tx
    .insertInto('crypto_refund_deposits')
    .values(
      deposits.map((deposit) => ({ refund_id: row.id, deposit_id: deposit.id, amount_micro: deposit.amount_micro })),
    )
    .execute();
  return inserted;
}

export async function depositIdsOfRefund(db: Executor<RefundTables>, refundId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('crypto_refund_deposits')
    .select('deposit_id')
    .where('refund_id', '=', refundId)
    .orderBy('deposit_id')
    .execute();
  return rows.map((row) => row.deposit_id);
}

export async function findRefundOfShop(
  db: Executor<RefundTables>,
  shopId: string,
  refundId: string,
): Promise<RefundRow | undefined> {
  return db
    .selectFrom('crypto_refunds')
    .selectAll()
    .where('id', '=', refundId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
}

export async function lockRefund(tx: Tx<RefundTables>, refundId: string): Promise<RefundRow | undefined> {
  return tx.selectFrom('crypto_refunds').selectAll().where('id', '=', refundId).forUpdate().executeTakeFirst();
}

export async function updateRefund(
  tx: Tx<RefundTables>,
  refundId: string,
  changes: Partial<
    Pick<RefundRow, 'status' | 'tx_hash' | 'error_code' | 'error_message' | 'network_fee_actual_micro' | 'completed_at'>
  > & {
    status: RefundStatus;
    updated_at: Date;
  },
): Promise<RefundRow> {
  return tx
    .updateTable('crypto_refunds')
    .set(changes)
    .where('id', '=', refundId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A failed refund gives its deposits back: they can be refunded again. */
export async function releaseDeposits(tx: Tx<RefundTables>, refundId: string): Promise<void> {
  await tx.updateTable('crypto_refund_deposits').set({ released: true }).where('refund_id', '=', refundId).execute();
}
