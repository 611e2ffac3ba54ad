// SQL of the payments module: payments and their guarded state transitions.
import type { ExpressionBuilder, Insertable, QueryCreator, Selectable } from 'kysely';
import type { Database } from '../db/schema.ts';
import { newestFirstPage, withinRange, type ListRange, type ListWindow } from '../db/list-page.ts';
import type { Executor, Tx } from '../db/transaction.ts';
import type { PaymentMethod, PaymentStatus, PaymentTables } from './payment-tables.ts';

export type PaymentRow = Selectable<PaymentTables['payments']>;

export async function insertPayment(
  db: Executor<PaymentTables>,
  row: Insertable<PaymentTables['payments']>,
): Promise<void> {
  await db.insertInto('payments').values(row).execute();
}

/** The same insert, unexecuted, for a caller that runs it inside a larger statement (the idempotency record's). */
export function insertPaymentQuery(creator: QueryCreator<Database>, row: Insertable<PaymentTables['payments']>) {
  return creator.insertInto('payments').values(row);
}

export async function findPaymentOfShop(
  db: Executor<PaymentTables>,
  shopId: string,
  paymentId: string,
): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('id', '=', paymentId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
}

export async function findPaymentById(db: Executor<PaymentTables>, paymentId: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('id', '=', paymentId).executeTakeFirst();
}

/** The payment row, locked until the transaction ends (transitions and attempts serialize on it). */
export async function lockPayment(tx: Tx<PaymentTables>, paymentId: string): Promise<PaymentRow | undefined> {
  return tx.selectFrom('payments').selectAll().where('id', '=', paymentId).forUpdate().executeTakeFirst();
}

export async function findPaymentByOrderCode(
  db: Executor<PaymentTables>,
  orderCode: string,
): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('order_code', '=', orderCode).executeTakeFirst();
}

export interface PaymentListQuery extends ListWindow {
  readonly shopId: string;
  readonly status?: PaymentStatus | undefined;
  readonly orderId?: string | undefined;
  /** The cabinet's window: created between two instants, amount between two bounds (kopecks). */
  readonly range?: ListRange | undefined;
  /** The cabinet's search: the payment's id (a lowercase uuid), or its order_id, exactly. */
  readonly search?: { readonly paymentId?: string | undefined; readonly orderId: string } | undefined;
}

export async function listPayments(db: Executor<PaymentTables>, query: PaymentListQuery): Promise<PaymentRow[]> {
  let builder = db.selectFrom('payments').selectAll().where('shop_id', '=', query.shopId);
  if (query.status) builder = builder.where('status', '=', query.status);
  if (query.orderId !== undefined) builder = builder.where('order_id', '=', query.orderId);
  if (query.range) builder = withinRange(builder, query.range, 'amount_kopecks');
  const search = query.search;
  if (search)
    builder = builder.where((eb) =>
      search.paymentId === undefined
        ? eb('order_id', '=', search.orderId)
        : eb.or([eb('id', '=', search.paymentId), eb('order_id', '=', search.orderId)]),
    );
  return newestFirstPage(builder, query);
}

/**
 * pending → paid, only while pending and if the charge began before expires_at
 * (`startedAt`, which is `at` unless an acquirer attempt began earlier); returns
 * the new row or undefined.
 */
export async function transitionToPaid(
  tx: Tx<PaymentTables>,
  paymentId: string,
  at: Date,
  paidMethod: PaymentMethod,
  paidTotalKopecks: bigint,
  startedAt: Date = at,
): Promise<PaymentRow | undefined> {
  return tx
    .updateTable('payments')
    .set({ status: 'paid', paid_at: at, paid_method: paidMethod, paid_total_kopecks: paidTotalKopecks })
    .where('id', '=', paymentId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', startedAt)
    .returningAll()
    .executeTakeFirst();
}

/** pending → failed; returns the new row or undefined when not pending. */
export async function transitionToFailed(
  tx: Tx<PaymentTables>,
  paymentId: string,
  at: Date,
  reason: string,
): Promise<PaymentRow | undefined> {
  return tx
    .updateTable('payments')
    .set({ status: 'failed', failed_at: at, failure_reason: reason })
    .where('id', '=', paymentId)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** pending → expired, unless a charge of unknown outcome is in flight; returns the new row or undefined. */
export async function transitionToExpired(
  tx: Tx<PaymentTables>,
  paymentId: string,
  at: Date,
): Promise<PaymentRow | undefined> {
  return tx
    .updateTable('payments')
    .set({ status: 'expired', expired_at: at })
    .where('id', '=', paymentId)
    .where('status', '=', 'pending')
    .where(({ not, exists, selectFrom }) => not(exists(pendingAttemptOf(selectFrom))))
    .returningAll()
    .executeTakeFirst();
}

/**
 * An attempt of the payment whose outcome is not known yet (the acquirer may have
 * taken the money), or whose payer is still at the acquirer (the reconciliation
 * worker abandons that one on a schedule, which then lets the payment expire).
 */
function pendingAttemptOf(selectFrom: ExpressionBuilder<Database, 'payments'>['selectFrom']) {
  return selectFrom('payment_attempts')
    .select('payment_attempts.id')
    .whereRef('payment_attempts.payment_id', '=', 'payments.id')
    .where('payment_attempts.status', 'in', ['pending', 'requires_action']);
}

/**
 * Locks up to `limit` due pending payments that no other worker holds. A payment
 * with a charge in flight or of unknown outcome (an attempt still `pending`) is
 * not due: the acquirer may have taken the money; reconciliation decides first.
 */
export async function claimDuePayments(tx: Tx<PaymentTables>, now: Date, limit: number): Promise<PaymentRow[]> {
  return tx
    .selectFrom('payments')
    .selectAll()
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
    .where(({ not, exists, selectFrom }) => not(exists(pendingAttemptOf(selectFrom))))
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** The earliest expires_at of a pending payment after `now` (the due ones were just handled). */
export async function nextPendingExpiryAfter(db: Executor<PaymentTables>, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('payments')
    .select('expires_at')
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .orderBy('expires_at')
    .limit(1)
    .executeTakeFirst();
  return row?.expires_at;
}
