// Moves due pending payments to `expired` (spec 3: at expires_at), polling at
// most every second so a payment expires within 5 s of its expires_at. Rows are
// claimed with FOR UPDATE SKIP LOCKED, so several workers share the queue.
import type { AppContext, Worker } from '../context.ts';
import { inTransaction } from '../db/transaction.ts';
import { claimDuePayments } from './payment-repository.ts';
import { markPaymentExpired } from './payment-service.ts';

export const EXPIRY_POLL_INTERVAL_MS = 1_000;
const EXPIRY_BATCH_SIZE = 100;
const EXPIRY_BATCHES_PER_RUN_MAX = 50;

export interface ExpiryWorker extends Worker {
  /** One pass: expires every due payment (in bounded batches); returns how many. */
  runOnce(): Promise<number>;
}

export function createExpiryWorker(context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger'>): ExpiryWorker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

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

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runOnce()
        .catch((error: unknown) => context.logger.error({ err: error }, 'payment expiry pass failed'))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, EXPIRY_POLL_INTERVAL_MS);
  }

  return {
    name: 'payment-expiry',
    runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
