// Resolves payment attempts whose outcome the gateway never learned (the process
// died after the acquirer call, the call timed out, the payer left the
// confirmation step) by asking the acquirer: `AcquirerConnector.lookup` with the
// attempt's charge key. A known outcome is applied exactly as the page applies
// it (attempt-service.ts); a key the acquirer never saw is abandoned after
// ABANDON_AFTER_MS, which lets the expiry worker expire the payment.
import type { AppContext } from '../context.ts';
import { WORK_TOPICS } from '../db/notifications.ts';
import { createBatchedWorker, type Batch, type PollingWorker, type PollingWorkerOptions } from '../polling-worker.ts';
import { inTransaction } from '../db/transaction.ts';
import * as attempts from './attempt-repository.ts';
import type { AttemptRow } from './attempt-repository.ts';
import { applyAttemptOutcome, chargeReferenceOf, RECONCILE_AFTER_MS } from './attempt-service.ts';
import type { ChargeOutcome } from './connectors/acquirer-connector.ts';
import { connectorNamed, type ConnectorDeps } from './connectors/connector-registry.ts';
import { paymentMetrics, type ReconcileResult } from './payment-metrics.ts';

/** A pass every 5 s without wake-ups; at most 10 batches of 20 attempts a pass. */
const PACE = { intervalMs: 5_000, batchSize: 20, batchesPerPassMax: 10 };
/** While one worker asks the acquirer about an attempt, others leave it alone this long. */
const LOOKUP_LEASE_MS = 60_000;
const LOOKUP_BACKOFF_MAX_MS = 30 * 60_000;
/** An acquirer that has not heard of a charge key this long after the attempt never will. */
export const ABANDON_AFTER_MS = 15 * 60_000;
/** A payer who has not confirmed within a day never will (3-D Secure sessions last minutes). */
const CONFIRMATION_ABANDON_AFTER_MS = 24 * 60 * 60_000;
/**
 * A payer still at the acquirer (its page, a QR) an hour after the attempt began
 * has left: a payment lives an hour, and the attempt holds its expiry off until
 * abandoned. A success the acquirer reports later still lands (in suspense if expired).
 */
const ACTION_ABANDON_AFTER_MS = 60 * 60_000;

/** How long an attempt may stay without a final outcome of this kind before it is abandoned. */
function abandonAfterMs(outcome: ChargeOutcome | undefined): number | undefined {
  if (outcome === undefined) return ABANDON_AFTER_MS;
  if (outcome.status === 'requires_confirmation') return CONFIRMATION_ABANDON_AFTER_MS;
  if (outcome.status === 'requires_action') return ACTION_ABANDON_AFTER_MS;
  return undefined;
}

/** Its runOnce makes one pass over the attempts due for a look-up; returns how many were resolved. */
export type ReconciliationWorker = PollingWorker;

type ReconcileContext = Pick<
  AppContext,
  'db' | 'clock' | 'config' | 'logger' | 'health' | 'metrics' | 'notifications'
> &
  Pick<ConnectorDeps, 'keyring' | 'acquirerProviders'>;

export function createReconciliationWorker(
  context: ReconcileContext,
  options: PollingWorkerOptions = {},
): ReconciliationWorker {
  const metrics = paymentMetrics(context);

  async function later(attempt: AttemptRow): Promise<void> {
    const backoffMs = Math.min(RECONCILE_AFTER_MS * 2 ** Math.min(attempt.lookups, 10), LOOKUP_BACKOFF_MAX_MS);
    await inTransaction(context.db, (tx) =>
      attempts.scheduleAttemptCheck(tx, attempt.id, new Date(context.clock.now().getTime() + backoffMs)),
    );
  }

  async function reconcile(attempt: AttemptRow): Promise<ReconcileResult> {
    const connector = await connectorNamed(context, attempt.connector);
    if (!connector) {
      context.logger.error(
        { attempt_id: attempt.id, connector: attempt.connector },
        'payment attempt names a connector this build lacks',
      );
      await later(attempt);
      return 'unknown';
    }
    const outcome = await connector.lookup(chargeReferenceOf(attempt));
    const ageMs = context.clock.now().getTime() - attempt.created_at.getTime();
    const limitMs = abandonAfterMs(outcome);
    if (limitMs !== undefined && ageMs >= limitMs) {
      await inTransaction(context.db, (tx) => attempts.abandonAttempt(tx, attempt.id, context.clock.now()));
      context.logger.info(
        { attempt_id: attempt.id, payment_id: attempt.payment_id },
        'payment attempt abandoned: the acquirer has no outcome for it',
      );
      return 'abandoned';
    }
    if (outcome === undefined) {
      await later(attempt);
      return 'unknown';
    }
    const applied = await applyAttemptOutcome(context, attempt, outcome);
    if (applied.status === 'requires_confirmation') return 'unknown';
    if (applied.status === 'pending' || applied.status === 'requires_action') {
      // Still open at the acquirer (the payer acts there, or it processes): ask again, further apart each time.
      await later(applied);
      return 'unknown';
    }
    context.logger.info(
      {
        attempt_id: attempt.id,
        payment_id: attempt.payment_id,
        status: applied.status,
        applied_as: applied.applied_as,
      },
      'payment attempt reconciled',
    );
    return 'applied';
  }

  return createBatchedWorker(
    context,
    {
      name: 'payment-reconciliation',
      ...PACE,
      /** Claims a batch of attempts due for a look-up and asks about each; counts those resolved. */
      async runBatch(batchSize): Promise<Batch> {
        const now = context.clock.now();
        const due = await inTransaction(context.db, (tx) =>
          attempts.claimAttemptsToReconcile(tx, now, new Date(now.getTime() + LOOKUP_LEASE_MS), batchSize),
        );
        let resolved = 0;
        for (const attempt of due) {
          let result: ReconcileResult;
          try {
            result = await reconcile(attempt);
          } catch (error) {
            // The lease set at the claim brings it back after LOOKUP_LEASE_MS.
            context.logger.warn({ err: error, attempt_id: attempt.id }, 'payment attempt look-up failed; will retry');
            result = 'failed';
          }
          metrics.countReconciled(result);
          if (result === 'applied' || result === 'abandoned') resolved += 1;
        }
        return { taken: due.length, handled: resolved };
      },
      // Every check is scheduled RECONCILE_AFTER_MS (a minute) or more ahead, beyond the
      // backstop, so none needs a notification: the worker learns of it in time by asking.
      wakeUps: {
        topic: WORK_TOPICS.paymentReconciliation,
        nextDueAt: (passStartedAt) => attempts.nextCheckAfter(context.db, passStartedAt),
      },
    },
    options,
  );
}
