// Charging durably. Before every acquirer call the gateway records a payment
// attempt (its charge key is the idempotency key the acquirer gets); after the
// call it applies the outcome in one transaction with the state change, the
// ledger entries and the webhook event. A process that dies in between leaves
// an attempt whose outcome is unknown: the expiry worker leaves its payment
// alone and the reconciliation worker asks the acquirer (`lookup`).
import type { AppContext } from '../context.ts';
import { inTransaction, type Tx } from '../db/transaction.ts';
import { newId } from '../ids.ts';
import * as attempts from './attempt-repository.ts';
import type { AttemptRow } from './attempt-repository.ts';
import type {
  AcquirerConnector,
  CardDetails,
  ChargeOutcome,
  ChargeReference,
} from './connectors/acquirer-connector.ts';
import { lockPayment, type PaymentRow } from './payment-repository.ts';
import { movePayment } from './payment-service.ts';
import type { ConnectorDeps } from './connectors/connector-registry.ts';
import type { PaymentMethod, SuspenseReason } from './payment-tables.ts';
import { holdInSuspense } from './suspense-service.ts';

export type AttemptDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'keyring'> &
  Pick<ConnectorDeps, 'acquirerProviders'>;

/** First look-up of an attempt still pending: longer than any acquirer call may take. */
export const RECONCILE_AFTER_MS = 60_000;
/** Look-ups of an attempt waiting for the payer's confirmation. */
const CONFIRMATION_CHECK_INTERVAL_MS = 5 * 60_000;

export interface NewAttempt {
  readonly payment: PaymentRow;
  readonly connector: AcquirerConnector;
  readonly chargeKey: string;
  readonly method: PaymentMethod;
  readonly amountKopecks: bigint;
}

/** The payment can take a new charge: pending and before expires_at. */
function payable(payment: PaymentRow | undefined, now: Date): payment is PaymentRow {
  return payment !== undefined && payment.status === 'pending' && payment.expires_at > now;
}

/**
 * Records the attempt before anything is sent to the acquirer. Returns undefined
 * (and nothing is charged) when the payment can no longer be paid. A repeat of
 * the charge key returns the attempt already recorded.
 */
export async function startAttempt(deps: AttemptDeps, request: NewAttempt): Promise<AttemptRow | undefined> {
  return inTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    // The lock orders this against the expiry worker: once committed, the pending attempt holds expiry off.
    if (!payable(await lockPayment(tx, request.payment.id), now)) return undefined;
    return attempts.insertAttemptOnce(tx, {
      id: newId('paymentAttempt'),
      payment_id: request.payment.id,
      charge_key: request.chargeKey,
      connector: request.connector.name,
      method: request.method,
      amount_kopecks: request.amountKopecks,
      status: 'pending',
      decline_code: null,
      applied_as: null,
      suspense_reason: null,
      refund_status: null,
      refunded_at: null,
      next_check_at: new Date(now.getTime() + RECONCILE_AFTER_MS),
      created_at: now,
      updated_at: now,
      resolved_at: null,
    });
  });
}

/** The charge itself, through the connector, with the attempt's key. No transaction is open. */
export async function chargeAttempt(
  connector: AcquirerConnector,
  attempt: AttemptRow,
  payer: { readonly returnUrl: string; readonly description: string; readonly card?: CardDetails | undefined },
): Promise<ChargeOutcome> {
  return connector.charge({
    chargeKey: attempt.charge_key,
    paymentId: attempt.payment_id,
    method: attempt.method,
    amountKopecks: attempt.amount_kopecks,
    currency: 'RUB',
    returnUrl: payer.returnUrl,
    description: payer.description,
    card: payer.card,
  });
}

/** What a connector needs to find an attempt's charge again. */
export function chargeReferenceOf(attempt: AttemptRow): ChargeReference {
  return {
    chargeKey: attempt.charge_key,
    paymentId: attempt.payment_id,
    method: attempt.method,
    amountKopecks: attempt.amount_kopecks,
    providerReference: attempt.provider_reference ?? undefined,
    createdAt: attempt.created_at,
    payerAction: payerActionOf(attempt),
  };
}

/** The payer action the attempt stored with its `requires_action` outcome. */
export function payerActionOf(attempt: AttemptRow): PayerAction | undefined {
  if (attempt.payer_action_kind === 'redirect' && attempt.payer_action_url)
    return { kind: 'redirect', url: attempt.payer_action_url };
  if (attempt.payer_action_kind === 'qr' && attempt.payer_action_qr)
    return { kind: 'qr', payload: attempt.payer_action_qr, deepLink: attempt.payer_action_deep_link ?? undefined };
  return undefined;
}

/**
 * Before the payer's confirmation is sent to the acquirer, the attempt is marked
 * pending again (its outcome is about to become unknown). Undefined when the
 * payment can no longer be paid or the attempt is not awaiting confirmation.
 */
export async function armConfirmation(
  deps: AttemptDeps,
  paymentId: string,
  chargeKey: string,
): Promise<AttemptRow | undefined> {
  return inTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    if (!payable(await lockPayment(tx, paymentId), now)) return undefined;
    const attempt = await attempts.findAttemptByChargeKey(tx, chargeKey);
    if (!attempt || attempt.payment_id !== paymentId || attempt.status !== 'requires_confirmation') return undefined;
    return attempts.updateAttempt(tx, attempt.id, {
      status: 'pending',
      updated_at: now,
      next_check_at: new Date(now.getTime() + RECONCILE_AFTER_MS),
    });
  });
}

/**
 * Applies what the acquirer said about an attempt, once: a success pays the
 * payment if it is pending and the charge began before expires_at, otherwise
 * the capture goes to suspense; a final decline fails the payment. The page,
 * the confirmation step and the reconciliation worker all come through here.
 */
export async function applyAttemptOutcome(
  deps: AttemptDeps,
  attempt: AttemptRow,
  outcome: ChargeOutcome,
): Promise<AttemptRow> {
  return inTransaction(deps.db, async (tx) => {
    // Payment first, then attempt: the order every path takes.
    const payment = await lockPayment(tx, attempt.payment_id);
    const current = await attempts.lockAttempt(tx, attempt.id);
    if (!payment || !current) throw new Error(`payment attempt ${attempt.id} or its payment is missing`);
    if (current.status === 'succeeded' || current.status === 'declined') return current;
    // Ids and outcome only: card data never reaches a log line (docs/connectors.md, "Card data").
    deps.logger.debug(
      { attempt_id: current.id, payment_id: payment.id, method: current.method, outcome: outcome.status },
      'applying the acquirer outcome',
    );
    const now = deps.clock.now();
    // The acquirer's id of the charge, kept from the first answer that carries it.
    if (outcome.providerReference !== undefined && current.provider_reference === null)
      await attempts.updateAttempt(tx, current.id, { provider_reference: outcome.providerReference.slice(0, 200) });
    switch (outcome.status) {
      case 'requires_confirmation':
        return attempts.updateAttempt(tx, current.id, {
          status: 'requires_confirmation',
          updated_at: now,
          next_check_at: new Date(now.getTime() + CONFIRMATION_CHECK_INTERVAL_MS),
        });
      case 'declined':
        if (outcome.final && payable(payment, now))
          await movePayment(tx, deps.clock, deps.config.publicUrl, payment, {
            to: 'failed',
            reason: outcome.declineCode,
          });
        return attempts.updateAttempt(tx, current.id, {
          status: 'declined',
          decline_code: outcome.declineCode.slice(0, 100),
          updated_at: now,
          resolved_at: now,
        });
      case 'succeeded':
        return applyCapture(tx, deps, payment, current);
      case 'requires_action':
        // The payer is at the acquirer; the page shows the action again until a notification
        // or the reconciliation worker's look-up ends the attempt. A second charge of the same
        // key (a double submit) may answer with another session of the acquirer: the action
        // stays the one of the charge the attempt records, so the payer pays what we look up.
        return attempts.updateAttempt(tx, current.id, {
          status: 'requires_action',
          ...(keepsStoredAction(current, outcome) ? {} : payerActionColumns(outcome.action)),
          updated_at: now,
          next_check_at: new Date(now.getTime() + RECONCILE_AFTER_MS),
        });
      case 'processing':
        // The acquirer holds the charge: the outcome arrives later, the reconciliation worker asks.
        return attempts.updateAttempt(tx, current.id, {
          status: 'pending',
          updated_at: now,
          next_check_at: new Date(now.getTime() + RECONCILE_AFTER_MS),
        });
    }
  });
}

type PayerAction = Extract<ChargeOutcome, { status: 'requires_action' }>['action'];

/** The attempt already shows the action of the charge it records, and the outcome is of another. */
function keepsStoredAction(attempt: AttemptRow, outcome: { readonly providerReference?: string | undefined }): boolean {
  return (
    attempt.payer_action_kind !== null &&
    attempt.provider_reference !== null &&
    outcome.providerReference !== undefined &&
    outcome.providerReference !== attempt.provider_reference
  );
}

function payerActionColumns(action: PayerAction) {
  return action.kind === 'redirect'
    ? {
        payer_action_kind: 'redirect' as const,
        payer_action_url: action.url,
        payer_action_qr: null,
        payer_action_deep_link: null,
      }
    : {
        payer_action_kind: 'qr' as const,
        payer_action_url: null,
        payer_action_qr: action.payload,
        payer_action_deep_link: action.deepLink ?? null,
      };
}

async function applyCapture(tx: Tx, deps: AttemptDeps, payment: PaymentRow, attempt: AttemptRow): Promise<AttemptRow> {
  const now = deps.clock.now();
  const resolved = { status: 'succeeded' as const, updated_at: now, resolved_at: now };
  if (payment.status === 'pending' && attempt.created_at < payment.expires_at) {
    await movePayment(tx, deps.clock, deps.config.publicUrl, payment, {
      to: 'paid',
      method: attempt.method,
      chargedTotalKopecks: attempt.amount_kopecks,
      startedAt: attempt.created_at,
    });
    return attempts.updateAttempt(tx, attempt.id, { ...resolved, applied_as: 'payment' });
  }
  const reason: SuspenseReason =
    payment.status === 'paid'
      ? 'payment_already_paid'
      : payment.status === 'failed'
        ? 'payment_failed'
        : 'payment_expired';
  const held = await attempts.updateAttempt(tx, attempt.id, {
    ...resolved,
    applied_as: 'suspense',
    suspense_reason: reason,
  });
  await holdInSuspense(tx, deps, payment, held);
  deps.logger.warn(
    { payment_id: payment.id, attempt_id: attempt.id, reason },
    'captured charge could not be applied; held in suspense for a refund',
  );
  return held;
}
