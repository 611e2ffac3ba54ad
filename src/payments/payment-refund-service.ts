// Merchants' refunds of paid RUB payments (docs/payments.md, "Refunds"): full or
// partial, never more in total than the payment's `amount` (the payer fee stays
// the payer's cost of paying, as the merchant never received it). A refund is
// recorded with its ledger reservation in one transaction under the payment's
// row lock (so racing refunds cannot together exceed the payment), then the
// acquirer is called outside any transaction; its outcome is applied with the
// ledger post or void and the `payment.refunded` event in one transaction. An
// outcome the gateway never learned is asked again by the refund worker.
import type { AppContext } from '../context.ts';
import { inTransaction, type Tx } from '../db/transaction.ts';
import { AlreadyRefundedError, InvalidRequestError, InvalidStateError, NotFoundError } from '../errors.ts';
import { newId } from '../ids.ts';
import {
  createUnderKey,
  keyedRequest,
  priorOutcome,
  priorResource,
  type Created,
  type IdempotencyRule,
  type KeyedCreation,
} from '../idempotency/idempotency-service.ts';
import { minorToJsonNumber, parseMinor } from '../money/decimal.ts';
import { numberLexeme } from '../money/json-lexemes.ts';
import { emit } from '../webhooks/outbox.ts';
import type { RefundOutcome, RefundRequest } from './connectors/acquirer-connector.ts';
import { connectorNamed, type ConnectorDeps } from './connectors/connector-registry.ts';
import { MAX_AMOUNT_KOPECKS } from './payment-amount.ts';
import { postRefund, releaseRefund, reserveRefund } from './payment-refund-ledger.ts';
import * as refunds from './payment-refund-repository.ts';
import type { PaymentRefundRow } from './payment-refund-repository.ts';
import { findPaymentById, type PaymentRow } from './payment-repository.ts';
import { isUuid, paymentView, type PaymentShop, type PaymentView } from './payment-service.ts';
import type { PaymentRefundStatus } from './payment-tables.ts';

export type PaymentRefundDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'logger'> &
  Pick<ConnectorDeps, 'keyring' | 'acquirerProviders'>;

export const REFUND_REASON_MAX_LENGTH = 500;
/** A payment has at most this many refunds (the list answers them all, in one page). */
export const REFUNDS_PER_PAYMENT_MAX = 100;
/** The refund worker asks about a refund whose outcome the request did not learn after this long. */
export const REFUND_CHECK_AFTER_MS = 60_000;

/** A refund as the API and the webhook show it. */
export interface PaymentRefundView {
  refund_id: string;
  payment_id: string;
  amount: number;
  currency: 'RUB';
  status: PaymentRefundStatus;
  reason: string | null;
  failure_reason: string | null;
  created_at: string;
  resolved_at: string | null;
}

function refundView(row: PaymentRefundRow): PaymentRefundView {
  return {
    refund_id: row.id,
    payment_id: row.payment_id,
    amount: minorToJsonNumber(row.amount_kopecks, 'RUB'),
    currency: 'RUB',
    status: row.status,
    reason: row.reason,
    failure_reason: row.failure_reason,
    created_at: row.created_at.toISOString(),
    resolved_at: row.resolved_at ? row.resolved_at.toISOString() : null,
  };
}

/** The body of POST /v1/payments/{payment_id}/refunds as the schema let it through. */
export interface CreateRefundRequest {
  readonly amount?: number | undefined;
  readonly reason?: string | null | undefined;
}

/** The same key and body within 24 h is the same refund, shown as it is now (200). */
const REFUND_IDEMPOTENCY_RULE: IdempotencyRule = {
  operation: 'payment.refund',
  windowMs: 24 * 60 * 60 * 1000,
  replay: 'current-resource',
  conflictMessage:
    'This Idempotency-Key was already used with a different refund request; use a new key for a new refund.',
};

function parseRefundAmount(request: CreateRefundRequest): bigint | null {
  if (request.amount === undefined) return null;
  const lexeme = numberLexeme(request, 'amount') ?? String(request.amount);
  const rule = 'amount must be a number from 0.01 to 1000000 with at most 2 decimal places';
  const parsed = parseMinor(lexeme, 'RUB', 'json-number');
  if (!parsed.ok) throw new InvalidRequestError(`${rule}; got ${lexeme.slice(0, 40)}, which ${parsed.problem}.`);
  if (parsed.minor < 1n || parsed.minor > MAX_AMOUNT_KOPECKS)
    throw new InvalidRequestError(`${rule}; got ${lexeme.slice(0, 40)}.`);
  return parsed.minor;
}

function parseReason(request: CreateRefundRequest): string | null {
  const reason = request.reason ?? null;
  if (reason !== null && (reason.length < 1 || reason.length > REFUND_REASON_MAX_LENGTH))
    throw new InvalidRequestError(`reason must be 1 to ${REFUND_REASON_MAX_LENGTH} characters.`);
  return reason;
}

async function lockPaymentOfShop(tx: Tx, shopId: string, paymentId: string): Promise<PaymentRow> {
  const payment = await tx
    .selectFrom('payments')
    .selectAll()
    .where('id', '=', paymentId)
    .where('shop_id', '=', shopId)
    .forUpdate()
    .executeTakeFirst();
  if (!payment) throw new NotFoundError('No such payment.');
  return payment;
}

/** What a refund of the payment may still take, under its lock; refuses what the payment cannot give. */
async function refundableKopecks(tx: Tx, payment: PaymentRow): Promise<bigint> {
  if (payment.status !== 'paid')
    throw new InvalidStateError(`The payment is ${payment.status}; only a paid payment can be refunded.`);
  const committed = await refunds.committedRefundKopecks(tx, payment.id);
  const left = payment.amount_kopecks - committed;
  if (left <= 0n)
    throw new AlreadyRefundedError(
      'Nothing is left to refund: the refunds of this payment, succeeded or still pending, take its whole amount.',
    );
  return left;
}

/** The capture the refund returns: the attempt that paid the payment, at the connector that charged it. */
async function captureOf(
  tx: Tx,
  shop: PaymentShop,
  payment: PaymentRow,
): Promise<{ attemptId: string | null; connector: string }> {
  const attempt = await tx
    .selectFrom('payment_attempts')
    .select(['id', 'connector'])
    .where('payment_id', '=', payment.id)
    .where('applied_as', '=', 'payment')
    .executeTakeFirst();
  if (attempt) return { attemptId: attempt.id, connector: attempt.connector };
  // A sandbox payment paid by the test helper was never charged: the sandbox settles its refunds itself.
  if (shop.mode === 'sandbox') return { attemptId: null, connector: 'sandbox' };
  throw new Error(`paid live payment ${payment.id} has no capture to refund`);
}

/**
 * Records a refund and reserves its amount, in the caller's transaction. The
 * payment's row lock makes racing refunds of one payment take turns, so their
 * total never passes `amount`.
 */
async function recordRefund(
  tx: Tx,
  deps: PaymentRefundDeps,
  shop: PaymentShop,
  paymentId: string,
  input: { amountKopecks: bigint | null; reason: string | null },
  record: (created: Created) => Promise<void>,
): Promise<PaymentRefundRow> {
  const payment = await lockPaymentOfShop(tx, shop.shopId, paymentId);
  const left = await refundableKopecks(tx, payment);
  const amountKopecks = input.amountKopecks ?? left;
  if (amountKopecks > left)
    throw new InvalidRequestError(
      `amount is more than is left to refund of this payment: at most ${minorToJsonNumber(left, 'RUB')} RUB.`,
    );
  const count = await refunds.listRefundsOfPayment(tx, payment.id, REFUNDS_PER_PAYMENT_MAX);
  if (count.length >= REFUNDS_PER_PAYMENT_MAX)
    throw new InvalidStateError(`A payment can have at most ${REFUNDS_PER_PAYMENT_MAX} refunds.`);
  const capture = await captureOf(tx, shop, payment);
  const id = newId('paymentRefund');
  await record({ resourceId: id });
  const now = deps.clock.now();
  const row = await refunds.insertRefund(tx, {
    id,
    payment_id: payment.id,
    shop_id: shop.shopId,
    attempt_id: capture.attemptId,
    connector: capture.connector,
    amount_kopecks: amountKopecks,
    reason: input.reason,
    status: 'pending',
    failure_reason: null,
    provider_refund_reference: null,
    next_check_at: new Date(now.getTime() + REFUND_CHECK_AFTER_MS),
    created_at: now,
    updated_at: now,
    resolved_at: null,
  });
  await reserveRefund(tx, deps.clock, { refundId: id, paymentId: payment.id, shopId: shop.shopId, amountKopecks });
  return row;
}

/**
 * POST /v1/payments/{payment_id}/refunds. Without `amount`, what is left of the
 * payment. With an Idempotency-Key, a repeat of the same request within 24 h
 * answers the same refund as it is now (`created: false`); another body is 409.
 */
export async function createPaymentRefund(
  deps: PaymentRefundDeps,
  shop: PaymentShop,
  paymentId: string,
  request: CreateRefundRequest,
  idempotencyKey: string | undefined,
): Promise<{ created: boolean; refund: PaymentRefundView }> {
  if (!isUuid(paymentId)) throw new NotFoundError('No such payment.');
  const normalizedId = paymentId.toLowerCase();
  const input = { amountKopecks: parseRefundAmount(request), reason: parseReason(request) };
  let row: PaymentRefundRow;
  if (idempotencyKey === undefined) {
    row = await inTransaction(deps.db, (tx) => recordRefund(tx, deps, shop, normalizedId, input, async () => {}));
  } else {
    const creation: KeyedCreation<PaymentRefundRow> = {
      rule: REFUND_IDEMPOTENCY_RULE,
      request: keyedRequest(shop.shopId, idempotencyKey, {
        payment_id: normalizedId,
        amount_kopecks: input.amountKopecks === null ? null : input.amountKopecks.toString(),
        reason: input.reason,
      }),
      showPrior: (tx, prior) => priorResource(prior, 'payment refund', (refundId) => refunds.findRefund(tx, refundId)),
    };
    const prior = await priorOutcome(deps.db, deps.clock, creation);
    if (prior) return { created: false, refund: refundView(prior) };
    let created = false;
    row = await createUnderKey(deps.db, deps.clock, creation, async (tx, record) => {
      const inserted = await recordRefund(tx, deps, shop, normalizedId, input, record);
      created = true;
      return inserted;
    });
    // A concurrent duplicate that lost the race on the key found the winner's refund.
    if (!created) return { created: false, refund: refundView(row) };
  }
  return { created: true, refund: refundView(await executeRefund(deps, row)) };
}

/** What the acquirer is asked to return, under the refund's id as its idempotency key. */
async function refundRequestOf(deps: PaymentRefundDeps, refund: PaymentRefundRow): Promise<RefundRequest | undefined> {
  if (refund.attempt_id === null) return undefined;
  const attempt = await deps.db
    .selectFrom('payment_attempts')
    .select(['charge_key', 'payment_id', 'provider_reference'])
    .where('id', '=', refund.attempt_id)
    .executeTakeFirstOrThrow();
  return {
    refundKey: refund.id,
    chargeKey: attempt.charge_key,
    paymentId: attempt.payment_id,
    providerReference: attempt.provider_reference ?? undefined,
    amountKopecks: refund.amount_kopecks,
  };
}

/**
 * Asks the acquirer for the refund (outside any transaction) and applies what it
 * answers. A failed call leaves the refund pending for the refund worker; `ask`
 * chooses the call (the worker looks up before it asks again).
 */
async function executeRefund(
  deps: PaymentRefundDeps,
  refund: PaymentRefundRow,
  ask: 'refund' | 'lookup-then-refund' = 'refund',
): Promise<PaymentRefundRow> {
  const request = await refundRequestOf(deps, refund);
  if (!request) return applyRefundOutcome(deps, refund.id, { status: 'succeeded', refundKey: refund.id });
  const connector = await connectorNamed(deps, refund.connector);
  if (!connector) {
    deps.logger.error(
      { refund_id: refund.id, connector: refund.connector },
      'refund names a connector this build lacks',
    );
    return refund;
  }
  let outcome: RefundOutcome;
  try {
    const known =
      ask === 'lookup-then-refund'
        ? await connector.lookupRefund({
            ...request,
            providerRefundReference: refund.provider_refund_reference ?? undefined,
          })
        : undefined;
    // The refund key is the refund's id, so asking again never returns the money twice.
    outcome = known ?? (await connector.refund(request));
  } catch (error) {
    deps.logger.warn(
      { err: error, refund_id: refund.id },
      'refund call to the acquirer failed; the refund worker retries',
    );
    return refund;
  }
  return applyRefundOutcome(deps, refund.id, outcome);
}

/** While one process asks the acquirer about a refund, others leave it alone this long. */
export const REFUND_LOOKUP_LEASE_MS = 60_000;
const REFUND_LOOKUP_BACKOFF_MAX_MS = 30 * 60_000;

/**
 * The refund worker's step for a refund it claimed: look it up, ask again under the
 * same key when the acquirer never received it, and check one still pending again
 * later, waiting longer each time.
 */
export async function checkClaimedRefund(
  deps: PaymentRefundDeps,
  refund: PaymentRefundRow,
  now: Date,
): Promise<PaymentRefundRow> {
  const after = await executeRefund(deps, refund, 'lookup-then-refund');
  if (after.status !== 'pending') return after;
  const backoffMs = Math.min(REFUND_CHECK_AFTER_MS * 2 ** Math.min(refund.lookups, 10), REFUND_LOOKUP_BACKOFF_MAX_MS);
  await refunds.scheduleRefundCheck(deps.db, refund.id, new Date(now.getTime() + backoffMs), null);
  return after;
}

/**
 * The acquirer confirmed that refunds of this capture moved without naming which
 * (T-Bank's refund notification): each of its pending refunds is looked up now, which
 * moves no money. One the look-up cannot settle (T-Bank's PARTIAL_REFUNDED may be an
 * earlier refund) takes the refund worker's step now, but only once its request's own
 * call is over (REFUND_CHECK_AFTER_MS after it was recorded): T-Bank does not recognise
 * a repeated Cancel key on SBP, so a Cancel still waiting for its answer is never sent twice.
 */
export async function checkRefundsOfCapture(deps: PaymentRefundDeps, attemptId: string): Promise<PaymentRefundRow[]> {
  const pending = await refunds.pendingRefundsOfAttempt(deps.db, attemptId, REFUNDS_PER_PAYMENT_MAX);
  const checked: PaymentRefundRow[] = [];
  for (const refund of pending) {
    const request = await refundRequestOf(deps, refund);
    const connector = request ? await connectorNamed(deps, refund.connector) : undefined;
    if (!request || !connector) continue;
    let known: RefundOutcome | undefined;
    try {
      known = await connector.lookupRefund({
        ...request,
        providerRefundReference: refund.provider_refund_reference ?? undefined,
      });
    } catch (error) {
      deps.logger.warn({ err: error, refund_id: refund.id }, 'refund look-up failed; the refund worker retries');
      continue;
    }
    if (known) {
      checked.push(await applyRefundOutcome(deps, refund.id, known));
      continue;
    }
    const now = deps.clock.now();
    if (refund.created_at.getTime() + REFUND_CHECK_AFTER_MS > now.getTime()) continue;
    const leaseUntil = new Date(now.getTime() + REFUND_LOOKUP_LEASE_MS);
    const claimed = await inTransaction(deps.db, (tx) => refunds.claimRefund(tx, refund.id, now, leaseUntil));
    if (claimed) checked.push(await checkClaimedRefund(deps, claimed, now));
  }
  return checked;
}

/** The event body: the payment as every payment event carries it, the refund, and what the payer got back in all. */
type RefundedEventData = PaymentView & { amount_refunded: number; refund: PaymentRefundView };

/**
 * Applies the acquirer's answer: succeeded → ledger post and `payment.refunded`;
 * refused → failed, the reservation voided; pending → checked again later. Only a
 * pending refund moves, once, whatever applies it first (the request or the worker).
 */
export async function applyRefundOutcome(
  deps: PaymentRefundDeps,
  refundId: string,
  outcome: RefundOutcome,
): Promise<PaymentRefundRow> {
  if (outcome.status === 'pending') {
    await refunds.scheduleRefundCheck(
      deps.db,
      refundId,
      new Date(deps.clock.now().getTime() + REFUND_CHECK_AFTER_MS),
      outcome.providerRefundReference ?? null,
    );
    return (await refunds.findRefund(deps.db, refundId))!;
  }
  return inTransaction(deps.db, async (tx) => {
    const pending = await refunds.lockPendingRefund(tx, refundId);
    if (!pending) return (await refunds.findRefund(tx, refundId))!;
    const now = deps.clock.now();
    if (outcome.status === 'refused') {
      await releaseRefund(tx, deps.clock, refundId);
      deps.logger.warn({ refund_id: refundId, reason: outcome.reason }, 'the acquirer refused a refund');
      return refunds.resolveRefund(tx, refundId, {
        status: 'failed',
        failure_reason: outcome.reason.slice(0, 200),
        provider_refund_reference: pending.provider_refund_reference,
        at: now,
      });
    }
    await postRefund(tx, deps.clock, refundId);
    const succeeded = await refunds.resolveRefund(tx, refundId, {
      status: 'succeeded',
      failure_reason: null,
      provider_refund_reference: outcome.providerRefundReference ?? pending.provider_refund_reference,
      at: now,
    });
    const payment = await findPaymentById(tx, succeeded.payment_id);
    if (!payment) throw new Error(`payment ${succeeded.payment_id} of refund ${refundId} vanished`);
    // Payment events go to the payment's callback_url (API.md); without one there is no receiver.
    if (payment.callback_url !== null) {
      const data: RefundedEventData = {
        ...paymentView(payment, deps.config.publicUrl),
        amount_refunded: minorToJsonNumber(await refunds.succeededRefundKopecks(tx, payment.id), 'RUB'),
        refund: refundView(succeeded),
      };
      await emit(tx, deps.clock, {
        shopId: payment.shop_id,
        type: 'payment.refunded',
        data,
        destination: payment.callback_url,
      });
    }
    return succeeded;
  });
}

/** A payment's refunds with its totals: what the payer got back, and what may still be refunded. */
export interface PaymentRefundList {
  data: PaymentRefundView[];
  amount_refunded: number;
  amount_refundable: number;
}

async function paymentOfShop(deps: PaymentRefundDeps, shopId: string, paymentId: string): Promise<PaymentRow> {
  const payment = isUuid(paymentId) ? await findPaymentById(deps.db, paymentId.toLowerCase()) : undefined;
  if (!payment || payment.shop_id !== shopId) throw new NotFoundError('No such payment.');
  return payment;
}

export async function listPaymentRefunds(
  deps: PaymentRefundDeps,
  shopId: string,
  paymentId: string,
): Promise<PaymentRefundList> {
  const payment = await paymentOfShop(deps, shopId, paymentId);
  const rows = await refunds.listRefundsOfPayment(deps.db, payment.id, REFUNDS_PER_PAYMENT_MAX);
  const sum = (statuses: readonly PaymentRefundStatus[]) =>
    rows.filter((row) => statuses.includes(row.status)).reduce((total, row) => total + row.amount_kopecks, 0n);
  const refundable = payment.status === 'paid' ? payment.amount_kopecks - sum(['pending', 'succeeded']) : 0n;
  return {
    data: rows.map(refundView),
    amount_refunded: minorToJsonNumber(sum(['succeeded']), 'RUB'),
    amount_refundable: minorToJsonNumber(refundable, 'RUB'),
  };
}

export async function getPaymentRefund(
  deps: PaymentRefundDeps,
  shopId: string,
  paymentId: string,
  refundId: string,
): Promise<PaymentRefundView> {
  const payment = await paymentOfShop(deps, shopId, paymentId);
  const row = refundId.length <= 64 ? await refunds.findRefund(deps.db, refundId) : undefined;
  if (!row || row.payment_id !== payment.id) throw new NotFoundError('No such refund.');
  return refundView(row);
}
