// Moves due pending payments to `expired` (spec 3: at expires_at), polling at
// most every second so a payment expires within 5 s of its expires_at. Rows are
// claimed with FOR UPDATE SKIP LOCKED, so several workers share the queue.
import type { AppContext } from '../context.ts';
import { createPollingWorker, type PollingWorker } from '../polling-worker.ts';
import { inTransaction } from '../db/transaction.ts';
import { claimDuePayments } from './payment-repository.ts';
import { markPaymentExpired } from './payment-service.ts';

export const EXPIRY_POLL_INTERVAL_MS = 1_000;
const EXPIRY_BATCH_SIZE = 100;
const EXPIRY_BATCHES_PER_RUN_MAX = 50;

/** Its runOnce makes one pass: expires every due payment (in bounded batches); returns how many. */
export type ExpiryWorker = PollingWorker;

export function createExpiryWorker(context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger'>): ExpiryWorker {
  async function runOnce(): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < EXPIRY_BATCHES_PER_RUN_MAX; batch++) {
      const expired = await inTransaction(context.db, async (tx) => {
        const due = await claimDuePayments(tx, context.clock.now(), EXPIRY_BATCH_SIZE);
        for (const payment of due) await markPaymentExpired(tx, context.clock, context.config.publicUrl, payment);
        return due.length;
      });
      total += expired;
      if (expired < EXPIRY_BATCH_SIZE) break;
    }
    return total;
  }

  return createPollingWorker({ name: 'payment-expiry', intervalMs: EXPIRY_POLL_INTERVAL_MS, logger: context.logger, runOnce });
}
