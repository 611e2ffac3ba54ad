// Moves due pending payments to `expired` (spec 3: at expires_at): it sleeps
// until the next payment's expires_at (or the backstop), polling every second
// when there are no wake-ups, so a payment expires within a second or two of
// its expires_at. Rows are claimed with FOR UPDATE SKIP LOCKED, so several
// workers share the queue.
import type { AppContext } from '../context.ts';
import { WORK_TOPICS } from '../db/notifications.ts';
import { createPollingWorker, type PollingWorker } from '../polling-worker.ts';
import { inTransaction } from '../db/transaction.ts';
import { claimDuePayments, nextPendingExpiryAfter } from './payment-repository.ts';
import { movePayment } from './payment-service.ts';

const EXPIRY_POLL_INTERVAL_MS = 1_000;
const EXPIRY_BATCH_SIZE = 100;
const EXPIRY_BATCHES_PER_RUN_MAX = 50;

/** Its runOnce makes one pass: expires every due payment (in bounded batches); returns how many. */
export type ExpiryWorker = PollingWorker;

export function createExpiryWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'health' | 'notifications'>,
): ExpiryWorker {
  /** The last pass stopped at its batch limit with payments still due. */
  let cutShort = false;
  async function runOnce(): Promise<number> {
    let total = 0;
    cutShort = true;
    for (let batch = 0; batch < EXPIRY_BATCHES_PER_RUN_MAX; batch++) {
      const expired = await inTransaction(context.db, async (tx) => {
        const due = await claimDuePayments(tx, context.clock.now(), EXPIRY_BATCH_SIZE);
        for (const payment of due)
          await movePayment(tx, context.clock, context.config.publicUrl, payment, { to: 'expired' });
        return due.length;
      });
      total += expired;
      if (expired < EXPIRY_BATCH_SIZE) {
        cutShort = false;
        break;
      }
    }
    return total;
  }

  return createPollingWorker({
    name: 'payment-expiry',
    intervalMs: EXPIRY_POLL_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    runOnce,
    // A payment is created an hour before it expires, far beyond the backstop, so only a
    // payment whose blocking card attempt resolves after its expires_at is notified (migration 0014).
    wakeUps: context.notifications && {
      notifications: context.notifications,
      topic: WORK_TOPICS.paymentExpiry,
      clock: context.clock,
      nextDueAt: async (passStartedAt) =>
        cutShort ? context.clock.now() : nextPendingExpiryAfter(context.db, passStartedAt),
    },
  });
}
