// SQL of refunds: the refunds and the deposits each sends back. The deposits
// themselves are receiving's: refund-service.ts reads them through its service.
import type { Insertable, Selectable } from 'kysely';
import { newestFirstPage, withinRange, type ListRange, type ListWindow } from '../../db/list-page.ts';
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

/**
 * A shop's refunds newest first, for the cabinet's table: by status, days, the
 * amount sent back, and one exact search (refund id, external_id, recipient
 * address, tx hash).
 */
export async function listRefunds(
  db: Executor<RefundTables>,
  query: ListWindow & {
    shopId: string;
    status?: RefundStatus | undefined;
    range?: ListRange | undefined;
    search?: string | undefined;
  },
): Promise<RefundRow[]> {
  let builder = db.selectFrom('crypto_refunds').selectAll().where('shop_id', '=', query.shopId);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  if (query.range) builder = withinRange(builder, query.range, 'amount_micro');
  const search = query.search;
  if (search !== undefined)
    builder = builder.where((eb) =>
      eb.or([
        eb('id', '=', search),
        eb('external_id', '=', search),
        eb('recipient_address', '=', search),
        eb('tx_hash', '=', search),
      ]),
    );
  return newestFirstPage(builder, query);
}

/** The refunds that send back this deposit (failed ones too), oldest first. */
export async function refundsOfDeposit(db: Executor<RefundTables>, depositId: string): Promise<RefundRow[]> {
  return db
    .selectFrom('crypto_refunds')
    .selectAll()
    .where('id', 'in', (eb) =>
      eb.selectFrom('crypto_refund_deposits').select('refund_id').where('deposit_id', '=', depositId),
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The refunds asked for an invoice, oldest first. */
export async function refundsOfInvoice(db: Executor<RefundTables>, invoiceId: string): Promise<RefundRow[]> {
  return db
    .selectFrom('crypto_refunds')
    .selectAll()
    .where('invoice_id', '=', invoiceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The shop of each refund among `ids` (the executor tells a sandbox chain whose each transfer is). */
export async function shopsOfRefunds(db: Executor<RefundTables>, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('crypto_refunds').select(['id', 'shop_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.shop_id]));
}
