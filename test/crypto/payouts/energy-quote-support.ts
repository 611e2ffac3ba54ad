// The energy-source quote tests' shared steps (payouts, refunds, withdrawals):
// the simulated chain's prices and a transfer to a new holder's energy, the
// network fees they give (burned, or bandwidth only on own energy), the hot
// wallet's stake as a signed FreezeBalanceV2, and the reservations held.
import { expect } from 'vitest';
import { ceilToCent } from '../../../src/crypto/payouts/payout-settings.ts';
import { sunToMicroUsdt, USDT_TRANSFER_BANDWIDTH } from '../../../src/crypto/sending/transfer-cost.ts';
import type { PayoutTestApp } from './payout-support.ts';

const TRX = 1_000_000n;
/** The simulated chain's prices (getEnergyFee, getTransactionFee) and a USDT transfer to a new holder. */
const ENERGY_PRICE_SUN = 100n;
const BANDWIDTH_PRICE_SUN = 1_000n;
export const NEW_HOLDER_ENERGY = 130_285n;

/** The network fees of a transfer to a new holder at the app's rate: energy and bandwidth burned, or bandwidth only. */
export function transferFees(testApp: Pick<PayoutTestApp, 'context'>) {
  const rate = testApp.context.config.trxUsdtRateMicro;
  const bandwidthSun = USDT_TRANSFER_BANDWIDTH * BANDWIDTH_PRICE_SUN;
  return {
    rate,
    /** The network fee when own energy covers the transfer: its bandwidth only. */
    bandwidthFee: ceilToCent(sunToMicroUsdt(bandwidthSun, rate)),
    /** The network fee with its energy at `energySun` (the burn price by default). */
    feeWithEnergyAt: (energySun: bigint = NEW_HOLDER_ENERGY * ENERGY_PRICE_SUN) =>
      ceilToCent(sunToMicroUsdt(energySun + bandwidthSun, rate)),
  };
}

/** Freezes `trx` of the sandbox hot wallet for energy (FreezeBalanceV2, signed with its key), in a block; its free energy. */
export async function stakeHotWallet(testApp: PayoutTestApp, trx: bigint): Promise<bigint> {
  const access = await testApp.crypto.chain.forMode('sandbox');
  const { chain } = await testApp.crypto.chain.sandboxChain();
  const outcome = chain.sendStake(
    {
      type: 'FreezeBalanceV2Contract',
      ownerAddress: access.addressKey.hotWalletAddress,
      frozenBalanceSun: trx * TRX,
      resource: 'ENERGY',
    },
    (await access.signingKey()).hotWalletPrivateKey(),
  );
  expect(outcome.result).toBe(true);
  chain.mine(1);
  return BigInt((await access.node.getAccountResources(access.addressKey.hotWalletAddress)).energyAvailable);
}

/** The own energy promised to transfers: transfer id and energy of each reservation. */
export function energyReservations(testApp: PayoutTestApp): Promise<{ transfer_id: string; energy: bigint }[]> {
  return testApp.context.db.selectFrom('crypto_energy_reservations').select(['transfer_id', 'energy']).execute();
}
