// Captures that no payment could take (a second capture of a paid payment, a
// capture after expiry or failure) are held in the ledger's suspense account,
// reported to the merchant (`payment.capture_unapplied`), and refunded to the
// payer through the connector they were charged by (`payment.capture_refunded`).
import type { AppContext } from '../context.ts';
import { inTransaction, type Tx } from '../db/transaction.ts';
import { InvalidStateError, NotFoundError } from '../errors.ts';
import { holdUnappliedCapture, releaseRefundedCapture } from './payment-suspense.ts';
import { findShopProfile } from '../merchants/merchant-service.ts';
import { emit } from '../webhooks/outbox.ts';
import * as attempts from './attempt-repository.ts';
import type { AttemptRow } from './attempt-repository.ts';
import { connectorNamed, type ConnectorDeps } from './connectors/connector-registry.ts';
import { minorToJsonNumber } from '../money/decimal.ts';
import { findPaymentById, type PaymentRow } from './payment-repository.ts';
import { paymentView, type PaymentView } from './payment-service.ts';

export type SuspenseDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'logger'> &
  Pick<ConnectorDeps, 'keyring' | 'acquirerProviders'>;

export const SUSPENSE_LIST_LIMIT_MAX = 1000;

/** A held capture as the merchant's webhook and the operator's CLI show it. */
export interface CaptureView {
  attempt_id: string;
  payment_id: string;
  amount: number;
  currency: 'RUB';
  method: string;
  reason: string;
  captured_at: string;
  refund_status: 'none' | 'requested' | 'refunded';
  refunded_at: string | null;
}

function captureView(attempt: AttemptRow): CaptureView {
  return {
    attempt_id: attempt.id,
    payment_id: attempt.payment_id,
    amount: minorToJsonNumber(attempt.amount_kopecks, 'RUB'),
    currency: 'RUB',
    method: attempt.method,
    reason: attempt.suspense_reason ?? 'unknown',
    captured_at: (attempt.resolved_at ?? attempt.updated_at).toISOString(),
    refund_status: attempt.refund_status ?? 'none',
    refunded_at: attempt.refunded_at ? attempt.refunded_at.toISOString() : null,
  };
}

/** The event body: the Payment as every payment event carries it, plus the capture. */
function captureEventData(
  payment: PaymentRow,
  attempt: AttemptRow,
  publicUrl: string,
): PaymentView & { capture: CaptureView } {
  return { ...paymentView(payment, publicUrl), capture: captureView(attempt) };
}

async function emitCaptureEvent(
  tx: Tx,
  deps: SuspenseDeps,
  type: string,
  payment: PaymentRow,
  attempt: AttemptRow,
): Promise<void> {
  // Payment events go to the payment's callback_url (API.md); without one there is no receiver.
  if (payment.callback_url === null) return;
  await emit(tx, deps.clock, {
    shopId: payment.shop_id,
    type,
    data: captureEventData(payment, attempt, deps.config.publicUrl),
    destination: payment.callback_url,
  });
}

/** A sandbox shop's captures are sandbox money: held in the sandbox book. */
async function bookOf(tx: Tx, payment: PaymentRow): Promise<'sandbox' | 'live'> {
  const owner = await findShopProfile(tx, payment.shop_id);
  if (!owner) throw new Error(`shop ${payment.shop_id} of payment ${payment.id} vanished`);
  return owner.mode;
}

/** Inside the caller's transaction: ledger hold and `payment.capture_unapplied`. */
export async function holdInSuspense(
  tx: Tx,
  deps: SuspenseDeps,
  payment: PaymentRow,
  attempt: AttemptRow,
): Promise<void> {
  await holdUnappliedCapture(tx, deps.clock, {
    book: await bookOf(tx, payment),
    attemptId: attempt.id,
    amountKopecks: attempt.amount_kopecks,
  });
  await emitCaptureEvent(tx, deps, 'payment.capture_unapplied', payment, attempt);
}

export async function listSuspenseCaptures(deps: Pick<SuspenseDeps, 'db'>, limit: number): Promise<CaptureView[]> {
  return (await attempts.listSuspenseAttempts(deps.db, Math.min(Math.max(limit, 1), SUSPENSE_LIST_LIMIT_MAX))).map(
    captureView,
  );
}

/**
 * Refunds a held capture in full through its connector. The request is recorded
 * before the call (refund_status `requested`) and the refund key is fixed by the
 * attempt, so a crash or a repeat never refunds twice; a repeat after success
 * returns the refunded capture.
 */
export async function refundSuspenseCapture(deps: SuspenseDeps, attemptId: string): Promise<CaptureView> {
  const requested = await inTransaction(deps.db, async (tx) => {
    const attempt = await attempts.lockAttempt(tx, attemptId);
    if (!attempt) throw new NotFoundError(`No payment attempt ${attemptId}.`);
    if (attempt.applied_as !== 'suspense')
      throw new InvalidStateError(`Payment attempt ${attemptId} is not held in suspense; nothing to refund.`);
    if (attempt.refund_status !== null) return attempt;
    return attempts.updateAttempt(tx, attempt.id, { refund_status: 'requested', updated_at: deps.clock.now() });
  });
  if (requested.refund_status === 'refunded') return captureView(requested);
  const connector = await connectorNamed(deps, requested.connector);
  if (!connector)
    throw new InvalidStateError(
      `The connector "${requested.connector}" of attempt ${attemptId} is not available in this build.`,
    );
  const outcome = await connector.refund({
    refundKey: `${requested.charge_key}:refund`,
    chargeKey: requested.charge_key,
    paymentId: requested.payment_id,
    amountKopecks: requested.amount_kopecks,
  });
  if (outcome.status === 'refused')
    throw new InvalidStateError(`The acquirer refused the refund of attempt ${attemptId}: ${outcome.reason}.`);
  return inTransaction(deps.db, async (tx) => {
    const attempt = await attempts.lockAttempt(tx, attemptId);
    if (!attempt || attempt.refund_status === 'refunded') return captureView(attempt ?? requested);
    const now = deps.clock.now();
    const refunded = await attempts.updateAttempt(tx, attempt.id, {
      refund_status: 'refunded',
      refunded_at: now,
      updated_at: now,
    });
    const payment = await findPaymentById(tx, attempt.payment_id);
    if (!payment) throw new Error(`payment ${attempt.payment_id} of attempt ${attempt.id} vanished`);
    await releaseRefundedCapture(tx, deps.clock, {
      book: await bookOf(tx, payment),
      attemptId: attempt.id,
      amountKopecks: attempt.amount_kopecks,
    });
    if (payment) await emitCaptureEvent(tx, deps, 'payment.capture_refunded', payment, refunded);
    return captureView(refunded);
  });
}
