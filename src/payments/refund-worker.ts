// Resolves merchants' refunds whose outcome the gateway has not learned (the
// acquirer answered "pending", the call failed, the process died after recording
// the refund): it looks the refund up at the acquirer and, when the acquirer
// never received it, asks again under the same refund key, which never returns
// the money twice. The outcome is applied as the request applies it
// (payment-refund-service.ts); a refund still pending is asked again later, with backoff.
import type { AppContext } from '../context.ts';
import { WORK_TOPICS } from '../db/notifications.ts';
import { inTransaction } from '../db/transaction.ts';
import { createBatchedWorker, type Batch, type PollingWorker, type PollingWorkerOptions } from '../polling-worker.ts';
import type { ConnectorDeps } from './connectors/connector-registry.ts';
import { registerPendingRefundsGauge } from './payment-metrics.ts';
import { checkClaimedRefund, REFUND_LOOKUP_LEASE_MS } from './payment-refund-service.ts';
import * as refunds from './payment-refund-repository.ts';

/** A pass every 5 s without wake-ups; at most 10 batches of 20 refunds a pass. */
const PACE = { intervalMs: 5_000, batchSize: 20, batchesPerPassMax: 10 };

type RefundWorkerContext = Pick<
  AppContext,
  'db' | 'clock' | 'config' | 'logger' | 'health' | 'metrics' | 'notifications'
> &
  Pick<ConnectorDeps, 'keyring' | 'acquirerProviders'>;

export function createRefundWorker(context: RefundWorkerContext, options: PollingWorkerOptions = {}): PollingWorker {
  registerPendingRefundsGauge(context);
  return createBatchedWorker(
    context,
    {
      name: 'payment-refunds',
      ...PACE,
      /** Claims a batch of pending refunds due for a look-up and asks about each; counts those resolved. */
      async runBatch(batchSize): Promise<Batch> {
        const now = context.clock.now();
        const due = await inTransaction(context.db, (tx) =>
          refunds.claimRefundsToCheck(tx, now, new Date(now.getTime() + REFUND_LOOKUP_LEASE_MS), batchSize),
        );
        let resolved = 0;
        for (const refund of due) {
          try {
            const after = await checkClaimedRefund(context, refund, now);
            if (after.status === 'pending') continue;
            resolved += 1;
            context.logger.info({ refund_id: refund.id, status: after.status }, 'payment refund resolved');
          } catch (error) {
            // The lease set at the claim brings it back after REFUND_LOOKUP_LEASE_MS.
            context.logger.warn({ err: error, refund_id: refund.id }, 'payment refund look-up failed; will retry');
          }
        }
        return { taken: due.length, handled: resolved };
      },
      // Every check is scheduled a minute or more ahead, so none needs a notification.
      wakeUps: {
        topic: WORK_TOPICS.paymentRefunds,
        nextDueAt: (passStartedAt) => refunds.nextRefundCheckAfter(context.db, passStartedAt),
      },
    },
    options,
  );
}
