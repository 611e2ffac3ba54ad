// The sweeper (`serve --role worker|all`): each pass builds the USDT transfers of
// attempts whose top-up became final (a trigger of migration 0022 wakes it when
// one does), and at most once a minute looks for addresses over the threshold.
import type { AppContext, Worker } from '../../context.ts';
import { createPollingWorker } from '../../polling-worker.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { hasReadySweeps } from './sweeping-repository.ts';
import { runSweepPass } from './sweeping-service.ts';

/** How often addresses are checked against the threshold: deposits become final a minute after they land anyway. */
const SWEEP_SCAN_INTERVAL_MS = 60_000;
/** Without notifications: how often ready attempts are looked for. */
const SWEEP_POLL_INTERVAL_MS = 5_000;
const SWEEP_WAKE_TOPIC = 'crypto_sweep';

export function createSweeperWorker(
  context: CryptoDeps & Pick<AppContext, 'notifications' | 'health'>,
  options: { readonly pollIntervalMs?: number } = {},
): Worker {
  let lastScanMs = Number.NEGATIVE_INFINITY;
  return createPollingWorker({
    name: 'crypto-sweeper',
    intervalMs: options.pollIntervalMs ?? SWEEP_POLL_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    async runOnce() {
      const nowMs = context.clock.now().getTime();
      const scanCandidates = nowMs - lastScanMs >= SWEEP_SCAN_INTERVAL_MS;
      if (scanCandidates) lastScanMs = nowMs;
      const result = await runSweepPass(context, { scanCandidates });
      return result.started + result.built;
    },
    wakeUps: context.notifications && {
      notifications: context.notifications,
      topic: SWEEP_WAKE_TOPIC,
      clock: context.clock,
      // A ready attempt whose build failed (its node down) is retried a second later, not in a spin.
      nextDueAt: async (passStartedAt) =>
        (await hasReadySweeps(context.db))
          ? new Date(passStartedAt.getTime() + 1_000)
          : new Date(lastScanMs + SWEEP_SCAN_INTERVAL_MS),
    },
  });
}
