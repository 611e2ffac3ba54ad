// A sweeping setup: the receiving setup (fresh database, sandbox shop, the
// simulated chain over loopback HTTP on a manual clock, a chain watcher), the
// sweeper's dependencies with a chosen threshold, and the real sign-once
// executor driven pass by pass while blocks are mined.
import { expect } from 'vitest';
import type { DatabaseBackend } from '../../../src/db/database.ts';
import { createInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { mineBlocks, simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import {
  runSweepPass,
  type SweepingDeps,
  type SweepPassResult,
} from '../../../src/crypto/sweeping/sweeping-service.ts';
import { tronAddress, type TronAddress } from '../../../src/crypto/tron/address.ts';
import { createOutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import { sandboxHotWalletTopUp } from '../../../src/crypto/chain/sandbox-faucet.ts';
import { outgoingOutcomeHandlers } from '../../../src/modules.ts';
import { createEnergyManager } from '../../../src/crypto/energy/energy-manager.ts';
import type { EnergySourceSetting } from '../../../src/crypto/energy/energy-sources.ts';
import type { ExecutorOptions, ExecutorStep } from '../../../src/crypto/sending/executor-context.ts';
import { openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';

export interface SweepingSetup extends ReceivingSetup {
  readonly sweeping: SweepingDeps;
  readonly hotWallet: TronAddress;
  /** One executor pass (sign, broadcast, watch), as the worker runs it. */
  executorPass(): Promise<void>;
  sweep(): Promise<SweepPassResult>;
}

const THRESHOLD_MICRO = 50_000_000n;

export interface SweepingOptions {
  readonly thresholdMicro?: bigint;
  /** PAYGATE_TRON_ENERGY_SOURCES of the sweeper and the executor's energy manager; absent: the sweeper burns, no manager. */
  readonly energySources?: ReadonlySet<EnergySourceSetting>;
  /** The executor's test hook (a crash at a step). */
  readonly onStep?: (step: ExecutorStep) => void | Promise<void>;
  /** The executor's other settings: handlers of more purposes (payouts of the same hot wallet), a burn cap, its in-flight bound. */
  readonly executor?: Pick<Partial<ExecutorOptions>, 'handlers' | 'maxBurnSun' | 'maxInFlight'> & {
    /** False: no sandbox faucet refills the hot wallet when it is short (its TRX is then exactly what the chain charged). */
    readonly topUpHotWallet?: false;
    /** `new recipients`: the worker's default, a dry run only for a recipient never confirmed (here: every one). */
    readonly dryRun?: 'every transfer' | 'new recipients';
  };
}

export async function openSweepingSetup(
  backend: DatabaseBackend,
  options: SweepingOptions = {},
): Promise<SweepingSetup> {
  return sweepingOver(await openReceivingSetup(backend), options);
}

/**
 * New sweeper dependencies and a new executor over the same database and chain:
 * what a restarted process builds (nothing in memory survives from the old ones).
 */
export function sweepingOver(setup: ReceivingSetup, options: SweepingOptions = {}): SweepingSetup {
  const sweeping: SweepingDeps = {
    db: setup.context.db,
    clock: setup.clock,
    config: {
      sweepThresholdMicro: options.thresholdMicro ?? THRESHOLD_MICRO,
      ...(options.energySources && { tronEnergySources: options.energySources }),
      // The burn cap is one setting (PAYGATE_TRON_MAX_BURN_TRX) for the sweeper and the executor alike.
      ...(options.executor?.maxBurnSun !== undefined && { tronMaxBurnSun: options.executor.maxBurnSun }),
    },
    logger: setup.context.logger,
    chain: setup.chain,
  };
  const executorPass = startExecutor(setup, options);
  return {
    ...setup,
    sweeping,
    hotWallet: setup.access.addressKey.hotWalletAddress,
    executorPass,
    sweep: () => runSweepPass(sweeping),
  };
}

/** The real executor of the sandbox chain, with the outcome handlers the sweeping module declares in src/modules.ts. */
function startExecutor(setup: ReceivingSetup, options: SweepingOptions): () => Promise<void> {
  const {
    sweep,
    gas_topup: gasTopup,
    energy_delegation: energyDelegation,
    energy_undelegation: energyUndelegation,
  } = outgoingOutcomeHandlers();
  expect(sweep).toBeDefined();
  expect(gasTopup).toBeDefined();
  const energyManager =
    options.energySources &&
    createEnergyManager({
      db: setup.context.db,
      clock: setup.clock,
      logger: setup.context.logger,
      chain: setup.access.chain,
      sources: options.energySources,
    });
  const executor = createOutgoingExecutor({
    db: setup.context.db,
    clock: setup.clock,
    logger: setup.context.logger,
    chain: setup.access.chain,
    node: setup.access.node,
    transferEnergy: setup.access.transferEnergy,
    signingKey: () => setup.access.signingKey(),
    hotWallet: setup.access.addressKey.hotWalletAddress,
    usdtContract: setup.sandbox.chain.parameters.usdtContract,
    handlers: {
      ...options.executor?.handlers,
      sweep,
      gas_topup: gasTopup,
      energy_delegation: energyDelegation,
      energy_undelegation: energyUndelegation,
    },
    ...(energyManager && { energyManager }),
    ...(options.onStep && { onStep: options.onStep }),
    ...(options.executor?.maxBurnSun !== undefined && { maxBurnSun: options.executor.maxBurnSun }),
    trxUsdtRateMicro: setup.context.config.trxUsdtRateMicro,
    maxInFlight: options.executor?.maxInFlight ?? 100,
    maxAttempts: 3,
    fundsWaitSeconds: 600,
    ...(options.executor?.topUpHotWallet !== false && {
      topUpHotWallet: sandboxHotWalletTopUp({
        faucet: async (address, amounts) => setup.sandbox.chain.faucet(address, amounts),
        hotWallet: setup.access.addressKey.hotWalletAddress,
        chain: setup.access.chain,
        logger: setup.context.logger,
      }),
    }),
    // With the dry run the executor's funds check takes the transfer's real energy (64,285 to a hot
    // wallet holding USDT), which is what the exact top-up provides. Without it, it assumes 130,285
    // for every USDT transfer and leaves such a sweep waiting as short (docs/sweeping.md, "Known gap").
    ...(options.executor?.dryRun !== 'new recipients' && { dryRunBeforeSigning: true }),
  });
  return async () => {
    await executor.runPass();
  };
}

/** An invoice paid with `amount` USDT and its deposit final (credited); returns the deposit address. */
export async function finalDepositOn(
  setup: SweepingSetup,
  externalId: string,
  amount: string,
  address?: string,
): Promise<TronAddress> {
  let target = address;
  if (target === undefined) {
    const { invoice } = await createInvoice(setup.deps, setup.shop, {
      external_id: externalId,
      amount,
      network: 'TRC20',
    });
    target = invoice.address;
  }
  await simulateDeposit(setup.deps, setup.shop, { address: target, amount });
  await mineBlocks(setup.deps, setup.shop, 1);
  await setup.defaultWatcher.runPass();
  await mineBlocks(setup.deps, setup.shop, setup.sandbox.chain.parameters.solidityDepth);
  await setup.defaultWatcher.runPass();
  return tronAddress(target);
}

/**
 * Runs executor and sweeper passes, mining a block after each round, until
 * `done` holds; bounded (a sweep needs two transfers, each final 18 blocks on).
 */
export async function driveUntil(setup: SweepingSetup, done: () => Promise<boolean>, maxRounds = 120): Promise<void> {
  for (let round = 0; round < maxRounds; round++) {
    if (await done()) return;
    await setup.executorPass();
    await setup.sweep();
    await mineBlocks(setup.deps, setup.shop, 1);
    setup.clock.advance(3_000);
  }
  if (await done()) return;
  // Say where it got stuck: the attempts and the executor's transfers.
  const sweeps = await setup.context.db.selectFrom('crypto_sweeps').selectAll().execute();
  const transfers = await setup.context.db.selectFrom('crypto_outgoing_transfers').selectAll().execute();
  const attempts = await setup.context.db
    .selectFrom('crypto_outgoing_attempts')
    .select(['transfer_id', 'attempt', 'status', 'last_broadcast'])
    .execute();
  expect.fail(
    `not done after ${maxRounds} rounds: ${JSON.stringify({ sweeps, transfers, attempts }, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))}`,
  );
}

export async function usdtOf(setup: SweepingSetup, address: TronAddress): Promise<bigint> {
  return setup.access.node.getUsdtBalance(address);
}

export async function trxOf(setup: SweepingSetup, address: TronAddress): Promise<bigint> {
  return (await setup.access.node.getAccount(address)).balanceSun;
}
