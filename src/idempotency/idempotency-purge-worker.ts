// Purges idempotency records once their window is over, in bounded batches,
// so the table holds one window of keys, not every key ever sent. Records of
// external_id keys have no window and stay with their resource.
import type { AppContext } from '../context.ts';
import { createPollingWorker, type PollingWorker } from '../polling-worker.ts';
import { purgeExpiredRecords } from './idempotency-service.ts';

const IDEMPOTENCY_PURGE_INTERVAL_MS = 60_000;
const PURGE_BATCH_SIZE = 1_000;
const PURGE_BATCHES_PER_RUN_MAX = 20;

export function createIdempotencyPurgeWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'logger' | 'health'>,
): PollingWorker {
  async function runOnce(): Promise<number> {
    let purged = 0;
    for (let batch = 0; batch < PURGE_BATCHES_PER_RUN_MAX; batch++) {
      const deleted = await purgeExpiredRecords(context.db, context.clock.now(), PURGE_BATCH_SIZE);
      purged += deleted;
      if (deleted < PURGE_BATCH_SIZE) break;
    }
    return purged;
  }
  return createPollingWorker({
    name: 'idempotency-purge',
    intervalMs: IDEMPOTENCY_PURGE_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    runOnce,
  });
}
