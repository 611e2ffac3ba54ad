// Purges idempotency records once their window is over, in bounded batches,
// so the table holds one window of keys, not every key ever sent. Records of
// external_id keys have no window and stay with their resource.
import type { AppContext } from '../context.ts';
import { createBatchedWorker, type PollingWorker } from '../polling-worker.ts';
import { purgeExpiredRecords } from './idempotency-service.ts';

/** A pass a minute; at most 20 batches of 1,000 records a pass. */
const PACE = { intervalMs: 60_000, batchSize: 1_000, batchesPerPassMax: 20 };

export function createIdempotencyPurgeWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'logger' | 'health'>,
): PollingWorker {
  return createBatchedWorker(context, {
    name: 'idempotency-purge',
    ...PACE,
    async runBatch(batchSize) {
      const deleted = await purgeExpiredRecords(context.db, context.clock.now(), batchSize);
      return { taken: deleted, handled: deleted };
    },
  });
}
