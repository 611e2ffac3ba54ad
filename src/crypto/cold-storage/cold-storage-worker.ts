// The cold-storage worker (`serve --role worker|all`): once a minute, the live
// hot wallet against its ceiling; the surplus reported, and moved to the cold
// address when one is configured (cold-storage-service.ts).
import type { AppContext, Worker } from '../../context.ts';
import { createPollingWorker } from '../../polling-worker.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { runColdStoragePass } from './cold-storage-service.ts';

const COLD_STORAGE_INTERVAL_MS = 60_000;

export function createColdStorageWorker(context: CryptoDeps & Pick<AppContext, 'metrics' | 'health'>): Worker {
  return createPollingWorker({
    name: 'crypto-cold-storage',
    intervalMs: COLD_STORAGE_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    async runOnce() {
      // No ceiling configured: nothing to watch, and no chain is started for it.
      if (context.config.tronHotWalletCeilingMicro === undefined) return 0;
      return (await runColdStoragePass(context)).moved;
    },
  });
}
