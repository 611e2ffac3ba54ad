// What the cabinet reads of a shop's payments beyond the API's Payment: the
// table's page (the API's list with a date and amount window and a search by
// payment id or order_id) and one payment with its attempts at the acquirer
// and its refunds, for its page's timeline. Reads only; the state machine is payment-service.ts.
import { createdAtOrder, readListPage, type ListPage, type ListQuery, type ListRange } from '../db/list-page.ts';
import { InvalidRequestError, NotFoundError } from '../errors.ts';
import { listAttemptsOfPayment } from './attempt-repository.ts';
import { listRefundsOfPayment } from './payment-refund-repository.ts';
import { REFUNDS_PER_PAYMENT_MAX } from './payment-refund-service.ts';
import * as repository from './payment-repository.ts';
import type { PaymentRow } from './payment-repository.ts';
import { isUuid, paymentView, type PaymentServiceDeps, type PaymentView } from './payment-service.ts';
import type { PaymentMethod, PaymentStatus, PaymentTables } from './payment-tables.ts';

export const PAYMENT_STATUSES: readonly PaymentStatus[] = ['pending', 'paid', 'failed', 'expired'];

/** The most attempts a payment's page shows (a payment has a handful). */
const ATTEMPTS_SHOWN_MAX = 100;

/** A payment as the cabinet shows it: the API's view, and what the API keeps to itself. */
export interface PaymentRecord {
  readonly view: PaymentView;
  readonly amountKopecks: bigint;
  readonly amountTotalKopecks: bigint;
  readonly createdAt: Date;
  readonly paidAt: Date | null;
  /** How the payer paid, and what was charged (amount and that method's fee). */
  readonly paidMethod: PaymentMethod | null;
  readonly paidTotalKopecks: bigint | null;
  readonly failedAt: Date | null;
  readonly failureReason: string | null;
  readonly expiredAt: Date | null;
}

/** One charge at the acquirer, as a payment's timeline shows it. */
export interface PaymentAttemptFact {
  readonly attemptId: string;
  readonly method: PaymentMethod;
  readonly connector: string;
  readonly amountKopecks: bigint;
  readonly status: PaymentTables['payment_attempts']['status'];
  readonly declineCode: string | null;
  /** `suspense`: the money came after the payment had ended and waits to be refunded. */
  readonly appliedAs: 'payment' | 'suspense' | null;
  readonly refundStatus: 'requested' | 'refunded' | null;
  readonly createdAt: Date;
  readonly resolvedAt: Date | null;
  readonly refundedAt: Date | null;
}

/** One refund the merchant asked for, as a payment's timeline shows it. */
export interface PaymentRefundFact {
  readonly refundId: string;
  readonly amountKopecks: bigint;
  readonly status: PaymentTables['payment_refunds']['status'];
  readonly failureReason: string | null;
  readonly createdAt: Date;
}

function recordOf(row: PaymentRow, publicUrl: string): PaymentRecord {
  return {
    view: paymentView(row, publicUrl),
    amountKopecks: row.amount_kopecks,
    amountTotalKopecks: row.amount_total_kopecks,
    createdAt: row.created_at,
    paidAt: row.paid_at,
    paidMethod: row.paid_method,
    paidTotalKopecks: row.paid_total_kopecks,
    failedAt: row.failed_at,
    failureReason: row.failure_reason,
    expiredAt: row.expired_at,
  };
}

export interface PaymentRecordFilter extends ListRange {
  readonly status?: string | undefined;
  /** A payment id or an order_id, matched exactly. */
  readonly search?: string | undefined;
}

function statusOf(value: string | undefined): PaymentStatus | undefined {
  if (value === undefined) return undefined;
  const status = PAYMENT_STATUSES.find((known) => known === value);
  if (!status) throw new InvalidRequestError(`status must be one of ${PAYMENT_STATUSES.join(', ')}.`);
  return status;
}

const RECORD_LIST_ORDER = createdAtOrder(isUuid);

/** One page of the shop's payments that pass the filter, newest first (the API's order and cursor). */
export async function listPaymentRecords(
  deps: PaymentServiceDeps,
  shopId: string,
  filter: PaymentRecordFilter,
  query: ListQuery,
): Promise<ListPage<PaymentRecord>> {
  const status = statusOf(filter.status);
  const search =
    filter.search === undefined
      ? undefined
      : { orderId: filter.search, paymentId: isUuid(filter.search) ? filter.search.toLowerCase() : undefined };
  return readListPage(
    query,
    RECORD_LIST_ORDER,
    (window) => repository.listPayments(deps.db, { shopId, status, range: filter, search, ...window }),
    (rows) => rows.map((row) => recordOf(row, deps.config.publicUrl)),
  );
}

/** A payment of the shop with its attempts and refunds, oldest first; another shop's, or an id of the wrong form, is 404. */
export async function getPaymentRecord(
  deps: PaymentServiceDeps,
  shopId: string,
  paymentId: string,
): Promise<{ record: PaymentRecord; attempts: PaymentAttemptFact[]; refunds: PaymentRefundFact[] }> {
  const row = isUuid(paymentId)
    ? await repository.findPaymentOfShop(deps.db, shopId, paymentId.toLowerCase())
    : undefined;
  if (!row) throw new NotFoundError('No such payment.');
  const [attempts, refunds] = await Promise.all([
    listAttemptsOfPayment(deps.db, row.id, ATTEMPTS_SHOWN_MAX),
    listRefundsOfPayment(deps.db, row.id, REFUNDS_PER_PAYMENT_MAX),
  ]);
  return {
    record: recordOf(row, deps.config.publicUrl),
    attempts: attempts.map((attempt) => ({
      attemptId: attempt.id,
      method: attempt.method,
      connector: attempt.connector,
      amountKopecks: attempt.amount_kopecks,
      status: attempt.status,
      declineCode: attempt.decline_code,
      appliedAs: attempt.applied_as,
      refundStatus: attempt.refund_status,
      createdAt: attempt.created_at,
      resolvedAt: attempt.resolved_at,
      refundedAt: attempt.refunded_at,
    })),
    refunds: refunds.map((refund) => ({
      refundId: refund.id,
      amountKopecks: refund.amount_kopecks,
      status: refund.status,
      failureReason: refund.failure_reason,
      createdAt: refund.created_at,
    })),
  };
}
