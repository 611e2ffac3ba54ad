// The background work of sending (`serve --role worker|all`): the sign-once
// executor of each chain that has outgoing transfers not final yet (the sandbox
// chain and, when configured, the live one), one leader per chain across every
// worker process. A queued transfer wakes it (migration 0019's trigger); while
// transfers are in flight it passes about once a second, as results solidify.
import type { AppContext, Worker } from '../../context.ts';
import type { LedgerBook } from '../../ledger/ledger-service.ts';
import { reportFailure } from '../../health/dependency-health.ts';
import { createPollingWorker } from '../../polling-worker.ts';
import type { CryptoChain } from '../chain/crypto-chain.ts';
import { tronAddress } from '../tron/address.ts';
import { USDT_CONTRACT_MAINNET } from '../tron/trc20-usdt.ts';
import { createOutgoingExecutor, type OutgoingExecutor } from './executor.ts';
import { createEnergyManager, type EnergyManager } from '../energy/energy-manager.ts';
import { rentalProviderFor } from '../energy/chain-rental.ts';
import { createOutflowCap } from './outflow-cap.ts';
import { createSigningPool, type SigningPool } from './signing-pool.ts';
import { OUTGOING_PURPOSES, type OutgoingOutcomeHandler, type OutgoingPurpose } from './outgoing-transfers.ts';
import { sendingMetrics } from './sending-metrics.ts';
import { hasOpenTransfers } from './sending-repository.ts';
import type { ChainName } from './sending-tables.ts';

const SENDING_TOPIC = 'outgoing_transfer';
const SENDING_INTERVAL_MS = 1_000;
const MODES = [
  { mode: 'sandbox', chain: 'tron-sandbox' },
  { mode: 'live', chain: 'tron-live' },
] as const;

/**
 * What a TRX transfer to an address the chain does not know yet burns at least: the account's
 * creation, mainnet's getCreateNewAccountFeeInSystemContract (1 TRX) + getCreateAccountFee (0.1 TRX),
 * the figures the planner adds to a TRX transfer (planner.ts transferNeeds). A sweep's top-up of a
 * fresh deposit address is such a transfer.
 */
export const NEW_ACCOUNT_BURN_SUN = 1_100_000n;

export type OutcomeHandlers = Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>>;

/**
 * The purposes no module handles: the executor leaves their transfers queued, and the
 * gateway reports them at start (a module that enqueues must declare its handler).
 */
export function missingOutcomeHandlers(handlers: OutcomeHandlers): OutgoingPurpose[] {
  return OUTGOING_PURPOSES.filter((purpose) => handlers[purpose] === undefined);
}

export function createOutgoingTransferWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'health' | 'role' | 'notifications' | 'metrics'> & {
    readonly chain: CryptoChain;
    /** Whether a book's signing is paused (custody's shortfall pause), read afresh once a pass. */
    readonly signingPaused: (book: LedgerBook) => Promise<boolean>;
  },
  handlers: OutcomeHandlers,
): Worker & { runOnce(): Promise<number> } {
  const deps = context;
  const executors = new Map<ChainName, OutgoingExecutor>();
  const metrics = sendingMetrics(context.metrics);
  let busy = false;
  // One signing thread for every chain's executor, made with the first executor: the main thread keeps
  // broadcasting and recording while a chunk is signed (signing-pool.ts). Idle, it does not hold the process.
  let signing: SigningPool | undefined;

  async function executorFor(mode: 'sandbox' | 'live'): Promise<OutgoingExecutor> {
    const access = await deps.chain.forMode(mode);
    let executor = executors.get(access.chain);
    if (!executor) {
      const sandbox = access.chain === 'tron-sandbox';
      signing ??= createSigningPool(1);
      executor = createOutgoingExecutor({
        signing,
        db: context.db,
        clock: context.clock,
        logger: context.logger,
        chain: access.chain,
        node: access.node,
        transferEnergy: access.transferEnergy,
        signingKey: () => access.signingKey(),
        hotWallet: access.addressKey.hotWalletAddress,
        // The sandbox chain runs mainnet's USDT address (crypto-chain.ts).
        usdtContract: sandbox ? USDT_CONTRACT_MAINNET : tronAddress(context.config.tronUsdtContract),
        handlers,
        trxUsdtRateMicro: context.config.trxUsdtRateMicro,
        maxInFlight: context.config.outgoingMaxInFlight,
        maxAttempts: context.config.outgoingMaxAttempts,
        fundsWaitSeconds: context.config.outgoingFundsWaitSeconds,
        transferEnergyMax: context.config.tronTransferEnergyMax,
        ...(context.config.tronMaxBurnSun === undefined ? {} : { maxBurnSun: context.config.tronMaxBurnSun }),
        energyManager: energyManagerFor(context, access.chain),
        signingPaused: () => deps.signingPaused(mode),
        // Counted per book: the sandbox is capped like live, so merchants see there what live will do.
        ...(context.config.tronHourlyOutflowCapMicro === undefined
          ? {}
          : {
              outflowCap: createOutflowCap({
                db: context.db,
                chain: access.chain,
                capMicro: context.config.tronHourlyOutflowCapMicro,
                logger: context.logger,
                metrics: context.metrics,
              }),
            }),
        // Only the sandbox chain's access has one (chain/sandbox-faucet.ts).
        topUpHotWallet: access.topUpHotWallet,
        declareTransferOwners: access.declareTransferOwners,
      });
      executors.set(access.chain, executor);
    }
    return executor;
  }

  const polling = createPollingWorker({
    name: 'crypto-outgoing-executor',
    intervalMs: SENDING_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    async runOnce() {
      let work = 0;
      busy = false;
      for (const { mode, chain } of MODES) {
        if (mode === 'live' && !deps.chain.liveConfigured) continue;
        const open = await hasOpenTransfers(context.db, chain);
        if (!open.queuedUnsigned && !open.inFlight) continue;
        busy = true;
        try {
          // Nothing is signed before the contract has said it has 6 decimals (amounts are micro-USDT).
          const access = await deps.chain.forMode(mode);
          if (!(await access.usdtDecimals.confirmed(context.clock, context.logger))) continue;
          const result = await (await executorFor(mode)).runPass();
          if (result.leader) metrics.recordPass(chain, result);
          work += result.signed + result.confirmed + result.failed;
        } catch (error) {
          // One chain's trouble (its nodes down, a missing signing key) must not stop the other's sending.
          reportFailure(context, error, { chain }, 'outgoing executor pass failed');
        }
      }
      return work;
    },
    wakeUps: context.notifications && {
      notifications: context.notifications,
      topic: SENDING_TOPIC,
      clock: context.clock,
      // Results arrive with blocks: about once a second while anything is open.
      nextDueAt: async () => (busy ? new Date(context.clock.now().getTime() + SENDING_INTERVAL_MS) : undefined),
    },
  });
  return {
    name: polling.name,
    runOnce: () => polling.runOnce(),
    start() {
      const missing = missingOutcomeHandlers(handlers);
      if (missing.length > 0)
        context.logger.warn(
          { purposes: missing },
          'outgoing transfers of these purposes have no outcome handler: they stay queued',
        );
      const cap = context.config.tronMaxBurnSun;
      if (cap !== undefined && cap < NEW_ACCOUNT_BURN_SUN)
        // The executor holds a transfer over the cap unsigned for ever, and a fresh address's top-up is always over it.
        context.logger.warn(
          { max_burn_sun: cap.toString(), new_account_burn_sun: NEW_ACCOUNT_BURN_SUN.toString() },
          'PAYGATE_TRON_MAX_BURN_TRX is below what creating an account burns: every top-up of a new deposit address waits unsigned, and its USDT is never swept; raise the cap to at least 1.1 TRX',
        );
      if (deps.chain.liveConfigured) {
        // Opened at start, so a missing or foreign sealed key is reported now, not at the first payout.
        void deps.chain
          .forMode('live')
          .then((access) => access.signingKey())
          .catch((error: unknown) =>
            context.logger.error(
              { err: error },
              'live sending is off: the live signing key cannot be opened; live transfers stay queued',
            ),
          );
      }
      polling.start();
    },
    async stop() {
      await polling.stop();
      for (const executor of executors.values()) await executor.release().catch(() => undefined);
      await signing?.close();
      signing = undefined;
      executors.clear();
    },
  };
}

/** The energy manager of a chain's executor: rental where the chain has a provider (energy/chain-rental.ts). */
function energyManagerFor(
  context: Pick<AppContext, 'config' | 'db' | 'clock' | 'logger'>,
  chain: ChainName,
): EnergyManager {
  const provider = rentalProviderFor(context.config, chain);
  const sources = new Set(context.config.tronEnergySources);
  if (!provider) sources.delete('rent');
  return createEnergyManager({
    db: context.db,
    clock: context.clock,
    logger: context.logger,
    chain,
    sources,
    provider,
  });
}
