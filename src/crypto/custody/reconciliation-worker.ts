// The custody reconciliation worker (`serve --role worker|all`): every
// PAYGATE_CUSTODY_RECONCILE_INTERVAL_SECONDS, one run per book (docs/custody.md).
// Each worker process reconciles on its own; a second run is one more row, and a
// pause set by either holds until acknowledged.
import type { AppContext, Worker } from '../../context.ts';
import { createPollingWorker, type PollingWorker } from '../../polling-worker.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { reconcileAll } from './reconciliation-service.ts';

/** How often the worker looks whether a run is due (the interval itself is the configuration's). */
const CHECK_INTERVAL_MS = 10_000;

export function createCustodyReconciliationWorker(
  context: CryptoDeps & Pick<AppContext, 'health'>,
): Worker & Pick<PollingWorker, 'runOnce'> {
  let lastRunMs = Number.NEGATIVE_INFINITY;
  return createPollingWorker({
    name: 'crypto-custody-reconciliation',
    intervalMs: CHECK_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    async runOnce() {
      const nowMs = context.clock.now().getTime();
      if (nowMs - lastRunMs < context.config.custodyReconcileIntervalSeconds * 1_000) return 0;
      lastRunMs = nowMs;
      return (await reconcileAll(context)).length;
    },
  });
}
