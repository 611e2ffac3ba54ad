// Notifications from production acquirers: the connection's connector checks a
// notification (source, signature) and confirms it with the acquirer's API; a
// charge it proves is applied to its attempt exactly as the page and the
// reconciliation worker apply outcomes (attempt-service.ts), so a repeat or a
// late, out-of-order notification changes nothing once the attempt is resolved.
// A refund proven by its key moves that refund; a notification that proves only
// that a capture was refunded has its pending refunds looked up at once.
import type { AppContext } from '../context.ts';
import { NotFoundError } from '../errors.ts';
import * as attempts from './attempt-repository.ts';
import { applyAttemptOutcome, type AttemptDeps } from './attempt-service.ts';
import type { AcquirerNotification, NotificationResult } from './connectors/acquirer-connector.ts';
import type { CrashPointHook } from './crash-points.ts';
import { findConnection } from './connectors/acquirer-connections.ts';
import { findRefund } from './payment-refund-repository.ts';
import { applyRefundOutcome, checkRefundsOfCapture } from './payment-refund-service.ts';
import { connectorNameOf, connectorOf, type ConnectorDeps } from './connectors/connector-registry.ts';

export type NotificationDeps = AttemptDeps &
  ConnectorDeps &
  Pick<AppContext, 'logger'> & { readonly crashPoint?: CrashPointHook | undefined };

type ChargeProof = Extract<NotificationResult, { kind: 'charge' }>;
type RefundProof = Extract<NotificationResult, { kind: 'refund' }>;
type ChargeRefundsProof = Extract<NotificationResult, { kind: 'charge_refunds' }>;

/** Applies a proven charge outcome to the attempt it names, by charge key or by the acquirer's id. */
async function applyCharge(deps: NotificationDeps, connectorName: string, proof: ChargeProof): Promise<void> {
  const reference = proof.reference;
  const attempt =
    'chargeKey' in reference
      ? await attempts.findAttemptByChargeKey(deps.db, reference.chargeKey)
      : await attempts.findAttemptByProviderReference(deps.db, connectorName, reference.providerReference);
  if (!attempt || attempt.connector !== connectorName) {
    deps.logger.warn({ connector: connectorName }, 'acquirer notification names a charge we have no attempt for');
    return;
  }
  const applied = await applyAttemptOutcome(deps, attempt, proof.outcome);
  deps.logger.info(
    { attempt_id: attempt.id, payment_id: attempt.payment_id, status: applied.status, connector: connectorName },
    'acquirer notification applied',
  );
}

/** Applies a proven refund outcome to the merchant's refund it names (the refund key is the refund's id). */
async function applyRefund(deps: NotificationDeps, connectorName: string, proof: RefundProof): Promise<void> {
  const refund = await findRefund(deps.db, proof.refundKey);
  if (!refund || refund.connector !== connectorName) {
    deps.logger.warn({ connector: connectorName }, 'acquirer notification names a refund we do not have');
    return;
  }
  const applied = await applyRefundOutcome(deps, refund.id, proof.outcome);
  deps.logger.info(
    { refund_id: refund.id, status: applied.status, connector: connectorName },
    'acquirer refund notification applied',
  );
}

/** Looks up the pending refunds of the capture the acquirer says were refunded (it names none of them). */
async function checkChargeRefunds(deps: NotificationDeps, connectorName: string, proof: ChargeRefundsProof) {
  const attempt = await attempts.findAttemptByProviderReference(
    deps.db,
    connectorName,
    proof.reference.providerReference,
  );
  if (!attempt || attempt.connector !== connectorName) {
    deps.logger.warn(
      { connector: connectorName },
      'acquirer refund notification names a charge we have no attempt for',
    );
    return;
  }
  const checked = await checkRefundsOfCapture(deps, attempt.id);
  deps.logger.info(
    {
      payment_id: attempt.payment_id,
      connector: connectorName,
      refunds: checked.map((refund) => ({ refund_id: refund.id, status: refund.status })),
    },
    'acquirer refund notification: pending refunds looked up',
  );
}

/**
 * Handles one notification for a stored connection (removed or not: its charges
 * still end). Unknown connection or provider is `NotFoundError`; what the connector
 * refuses changes nothing. Returns the reply the acquirer expects.
 */
export async function receiveNotification(
  deps: NotificationDeps,
  target: { readonly provider: string; readonly connectionId: string },
  notification: AcquirerNotification,
): Promise<NotificationResult['reply']> {
  const connection = await findConnection(deps, target.connectionId);
  const connector = connection?.provider === target.provider ? connectorOf(deps, connection) : undefined;
  if (!connection || !connector?.handleNotification) throw new NotFoundError('No such acquirer connection.');
  const result = await connector.handleNotification(notification);
  const name = connectorNameOf(connection);
  if (result.kind === 'charge' && result.outcome.status === 'succeeded')
    deps.crashPoint?.('after_notification_confirmed');
  if (result.kind === 'charge') await applyCharge(deps, name, result);
  else if (result.kind === 'refund') await applyRefund(deps, name, result);
  else if (result.kind === 'charge_refunds') await checkChargeRefunds(deps, name, result);
  else deps.logger.info({ connector: name, reason: result.reason }, 'acquirer notification ignored');
  return result.reply;
}
