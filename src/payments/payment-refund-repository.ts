// SQL of merchants' refunds of RUB payments (migration 0042_payment_refunds.sql):
// one row per refund, written with its ledger reservation before the acquirer is called.
import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from '../db/transaction.ts';
import type { PaymentTables } from './payment-tables.ts';

export type PaymentRefundRow = Selectable<PaymentTables['payment_refunds']>;

export async function insertRefund(
  tx: Tx<PaymentTables>,
  row: Insertable<PaymentTables['payment_refunds']>,
): Promise<PaymentRefundRow> {
  return tx.insertInto('payment_refunds').values(row).returningAll().executeTakeFirstOrThrow();
}

/** What the payment's refunds hold or took: pending and succeeded ones (a failed refund gave its amount back). */
export async function committedRefundKopecks(db: Executor<PaymentTables>, paymentId: string): Promise<bigint> {
  const row = await db
    .selectFrom('payment_refunds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<bigint | string>('amount_kopecks'), eb.lit(0)).as('total'))
    .where('payment_id', '=', paymentId)
    .where('status', 'in', ['pending', 'succeeded'])
    .executeTakeFirstOrThrow();
  return BigInt(row.total);
}

/** What the payer got back: the succeeded refunds. */
export async function succeededRefundKopecks(db: Executor<PaymentTables>, paymentId: string): Promise<bigint> {
  const row = await db
    .selectFrom('payment_refunds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<bigint | string>('amount_kopecks'), eb.lit(0)).as('total'))
    .where('payment_id', '=', paymentId)
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  return BigInt(row.total);
}

export async function findRefund(db: Executor<PaymentTables>, refundId: string): Promise<PaymentRefundRow | undefined> {
  return db.selectFrom('payment_refunds').selectAll().where('id', '=', refundId).executeTakeFirst();
}

export async function lockPendingRefund(
  tx: Tx<PaymentTables>,
  refundId: string,
): Promise<PaymentRefundRow | undefined> {
  return tx
    .selectFrom('payment_refunds')
    .selectAll()
    .where('id', '=', refundId)
    .where('status', '=', 'pending')
    .forUpdate()
    .executeTakeFirst();
}

/** A payment's refunds, oldest first; a payment has at most `limit` (the service caps their number). */
export async function listRefundsOfPayment(
  db: Executor<PaymentTables>,
  paymentId: string,
  limit: number,
): Promise<PaymentRefundRow[]> {
  return db
    .selectFrom('payment_refunds')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function resolveRefund(
  tx: Tx<PaymentTables>,
  refundId: string,
  patch: {
    status: 'succeeded' | 'failed';
    failure_reason: string | null;
    provider_refund_reference: string | null;
    at: Date;
  },
): Promise<PaymentRefundRow> {
  return tx
    .updateTable('payment_refunds')
    .set({
      status: patch.status,
      failure_reason: patch.failure_reason,
      provider_refund_reference: patch.provider_refund_reference,
      updated_at: patch.at,
      resolved_at: patch.at,
    })
    .where('id', '=', refundId)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function scheduleRefundCheck(
  db: Executor<PaymentTables>,
  refundId: string,
  at: Date,
  providerRefundReference: string | null,
): Promise<void> {
  await db
    .updateTable('payment_refunds')
    .set((eb) => ({
      next_check_at: at,
      provider_refund_reference: eb.fn.coalesce(eb.val(providerRefundReference), eb.ref('provider_refund_reference')),
    }))
    .where('id', '=', refundId)
    .where('status', '=', 'pending')
    .execute();
}

/** Claims pending refunds due for a look-up: their next check moves to `leaseUntil`, so other workers skip them. */
export async function claimRefundsToCheck(
  tx: Tx<PaymentTables>,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<PaymentRefundRow[]> {
  return tx
    .updateTable('payment_refunds')
    .set((eb) => ({ next_check_at: leaseUntil, lookups: eb('lookups', '+', 1) }))
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('payment_refunds')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_check_at', '<=', now)
        .orderBy('next_check_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute();
}

/** A capture's refunds still pending, oldest first. */
export async function pendingRefundsOfAttempt(
  db: Executor<PaymentTables>,
  attemptId: string,
  limit: number,
): Promise<PaymentRefundRow[]> {
  return db
    .selectFrom('payment_refunds')
    .selectAll()
    .where('attempt_id', '=', attemptId)
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Claims one pending refund as `claimRefundsToCheck` does, when its check is due. */
export async function claimRefund(
  tx: Tx<PaymentTables>,
  refundId: string,
  now: Date,
  leaseUntil: Date,
): Promise<PaymentRefundRow | undefined> {
  return (
    tx
      .updateTable('payment_refunds')
      .set((eb) => ({ next_check_at: leaseUntil, lookups: eb('lookups', '+', 1) }))
      .where('id', '=', refundId)
      .where('status', '=', 'pending')
      // Due only: a later next_check_at is the refund worker's lease (it may be in its own
      // call for this refund) or its backoff, and a second Cancel could refund SBP twice.
      .where('next_check_at', '<=', now)
      .returningAll()
      .executeTakeFirst()
  );
}

export async function nextRefundCheckAfter(db: Executor<PaymentTables>, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('payment_refunds')
    .select('next_check_at')
    .where('status', '=', 'pending')
    .where('next_check_at', '>', now)
    .orderBy('next_check_at')
    .limit(1)
    .executeTakeFirst();
  return row?.next_check_at;
}

/** Refunds still waiting for the acquirer's outcome (their money stays reserved meanwhile). */
export async function countPendingRefunds(db: Executor<PaymentTables>): Promise<number> {
  const row = await db
    .selectFrom('payment_refunds')
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('count'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
