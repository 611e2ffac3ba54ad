// The hot wallet's Stake 2.0 for energy tests: the TRX to freeze for a daily
// amount of a resource, by the chain's own arithmetic, and the freeze itself as
// a signed FreezeBalanceV2 transaction on the simulated chain.
import { expect } from 'vitest';
import { createEnergyManager, type EnergyManager } from '../../../src/crypto/energy/energy-manager.ts';
import type { EnergySourceSetting } from '../../../src/crypto/energy/energy-sources.ts';
import type { ResourceCode } from '../../../src/crypto/tron/stake-contracts.ts';
import type { ReceivingSetup } from '../receiving/receiving-service-support.ts';

export const TRX = 1_000_000n;

/**
 * The least whole TRX to freeze so that the account's daily share covers `need`:
 * share = stake × limit / (weight + stake) (calculateGlobalEnergyLimitV2 and
 * calculateGlobalNetLimit, the stake joining the network weight), so
 * stake ≥ need × weight / (limit − need); one TRX more for the node's truncation.
 */
export function stakeFor(need: bigint, totalLimit: bigint, weightTrx: bigint): bigint {
  const numerator = need * weightTrx;
  const denominator = totalLimit - need;
  return numerator / denominator + (numerator % denominator > 0n ? 1n : 0n) + 1n;
}

/** The TRX the hot wallet freezes for `energy` a day on this chain now. */
export function energyStakeFor(setup: ReceivingSetup, energy: bigint): bigint {
  const chain = setup.sandbox.chain;
  return stakeFor(energy, chain.parameters.totalEnergyLimit, chain.state.totalEnergyWeightTrx);
}

/** Freezes `trx` of the hot wallet for `resource` through a signed FreezeBalanceV2 transaction, in the next block. */
export async function freezeHotWallet(setup: ReceivingSetup, resource: ResourceCode, trx: bigint): Promise<void> {
  const outcome = setup.sandbox.chain.sendStake(
    {
      type: 'FreezeBalanceV2Contract',
      ownerAddress: setup.access.addressKey.hotWalletAddress,
      frozenBalanceSun: trx * TRX,
      resource,
    },
    (await setup.access.signingKey()).hotWalletPrivateKey(),
  );
  expect(outcome.result).toBe(true);
  setup.sandbox.chain.mine(1);
}

/** Blocks, and the gateway's clock with them. */
export function advanceBlocks(setup: ReceivingSetup, blocks: number): void {
  const chain = setup.sandbox.chain;
  chain.mine(blocks);
  setup.clock.advance(blocks * chain.parameters.blockIntervalMs);
}

export function energyManagerFor(setup: ReceivingSetup, sources: readonly EnergySourceSetting[]): EnergyManager {
  return createEnergyManager({
    db: setup.context.db,
    clock: setup.clock,
    logger: setup.context.logger,
    chain: 'tron-sandbox',
    sources: new Set(sources),
  });
}
