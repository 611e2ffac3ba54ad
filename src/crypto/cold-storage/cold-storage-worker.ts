// The cold-storage worker (`serve --role worker|all`): once a minute, the live
// hot wallet against its ceiling; the surplus reported, and moved to the cold
// address when one is configured (cold-storage-service.ts).
import type { AppContext, Worker } from '../../context.ts';
import { createPollingWorker } from '../../polling-worker.ts';
import { cryptoDepsFor } from '../receiving/crypto-deps.ts';
import { runColdStoragePass } from './cold-storage-service.ts';

export const COLD_STORAGE_INTERVAL_MS = 60_000;

export function createColdStorageWorker(context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'health' | 'keyring' | 'metrics'>): Worker {
  const deps = cryptoDepsFor(context);
  return createPollingWorker({
    name: 'crypto-cold-storage',
    intervalMs: COLD_STORAGE_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    async runOnce() {
      // No ceiling configured: nothing to watch, and no chain is started for it.
      if (context.config.tronHotWalletCeilingMicro === undefined) return 0;
      return (await runColdStoragePass({ ...deps, metrics: context.metrics })).moved;
    },
  });
}
