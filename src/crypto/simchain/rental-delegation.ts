// A rental provider's delegations made on the simulated chain (the itrx
// simulator's `delegate`, crypto/energy/itrx/itrx-simulator.ts): a provider
// account that froze TRX for energy signs a DelegateResource transaction giving
// the receiver the TRX worth the ordered energy at the network's rate now
// (EnergyProcessor.calculateGlobalEnergyLimit), locked for the rental's hour.
// A refused transaction (the provider's stake is used up) fails the order.
import type { SimulatedChain } from './simulated-chain.ts';
import { resourceLimit, SUN_PER_TRX } from './resource-usage.ts';
import { tronAddressFromPrivateKey, type TronAddress } from '../tron/address.ts';

/** A one-hour rental, in 3-second blocks. */
const RENTAL_LOCK_BLOCKS = 1_200n;

/** The whole TRX whose stake gives at least `energy` a day at the network's rate now. */
function stakeSunFor(chain: SimulatedChain, energy: bigint): bigint {
  const { totalEnergyLimit } = chain.parameters;
  const weightTrx = chain.state.totalEnergyWeightTrx;
  let trx = (energy * weightTrx + totalEnergyLimit - 1n) / totalEnergyLimit;
  // The chain computes in doubles: a rounding below the energy costs one more TRX.
  while (resourceLimit(trx * SUN_PER_TRX, totalEnergyLimit, weightTrx) < energy) trx += 1n;
  return (trx > 0n ? trx : 1n) * SUN_PER_TRX;
}

/** A `delegate` for the itrx simulator: the provider (its private key) delegates from its stake on `chain`. */
export function simulatedChainDelegation(
  chain: SimulatedChain,
  providerKey: Uint8Array,
): (address: TronAddress, energy: bigint) => Promise<string> {
  const provider = tronAddressFromPrivateKey(providerKey);
  return async (address, energy) => {
    const outcome = chain.sendStake(
      {
        type: 'DelegateResourceContract',
        ownerAddress: provider,
        resource: 'ENERGY',
        balanceSun: stakeSunFor(chain, energy),
        receiverAddress: address,
        lock: true,
        lockPeriodBlocks: RENTAL_LOCK_BLOCKS,
      },
      providerKey,
    );
    if (!outcome.result) throw new Error(`the chain refused the delegation: ${outcome.message}`);
    return outcome.txId;
  };
}
