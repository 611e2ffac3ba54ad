// Moves due pending payments to `expired` (spec 3: at expires_at): it sleeps
// until the next payment's expires_at (or the backstop), polling every second
// when there are no wake-ups, so a payment expires within a second or two of
// its expires_at. Rows are claimed with FOR UPDATE SKIP LOCKED, so several
// workers share the queue.
import type { AppContext } from '../context.ts';
import { WORK_TOPICS } from '../db/notifications.ts';
import { createBatchedWorker, type Batch, type PollingWorker, type PollingWorkerOptions } from '../polling-worker.ts';
import { inTransaction } from '../db/transaction.ts';
import { claimDuePayments, nextPendingExpiryAfter } from './payment-repository.ts';
import { movePayment } from './payment-service.ts';

/** A pass a second without wake-ups; at most 50 batches of 100 payments a pass. */
const PACE = { intervalMs: 1_000, batchSize: 100, batchesPerPassMax: 50 };

/** Its runOnce makes one pass: expires every due payment (in bounded batches); returns how many. */
export type ExpiryWorker = PollingWorker;

export function createExpiryWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'health' | 'notifications'>,
  options: PollingWorkerOptions = {},
): ExpiryWorker {
  return createBatchedWorker(
    context,
    {
      name: 'payment-expiry',
      ...PACE,
      /** Expires a batch of due payments in one transaction. */
      async runBatch(batchSize): Promise<Batch> {
        const expired = await inTransaction(context.db, async (tx) => {
          const due = await claimDuePayments(tx, context.clock.now(), batchSize);
          for (const payment of due)
            await movePayment(tx, context.clock, context.config.publicUrl, payment, { to: 'expired' });
          return due.length;
        });
        return { taken: expired, handled: expired };
      },
      // A payment is created an hour before it expires, far beyond the backstop, so only a
      // payment whose blocking card attempt resolves after its expires_at is notified (migration 0014).
      wakeUps: {
        topic: WORK_TOPICS.paymentExpiry,
        nextDueAt: (passStartedAt) => nextPendingExpiryAfter(context.db, passStartedAt),
      },
    },
    options,
  );
}
