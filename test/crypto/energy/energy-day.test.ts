// A simulated day of 1,000 payouts on the hot wallet's own stake: it freezes
// TRX for ENERGY and for BANDWIDTH (Stake 2.0, FreezeBalanceV2), sized by
// arithmetic from the chain's parameters for the day's transfers, and the real
// executor sends the payouts in batches spread over 24 h of blocks while the
// chain's use of both resources recovers over java-tron's day window. Every
// receipt burns 0 TRX for energy and for bandwidth, every transfer's energy is
// `staked`, the custody-costs sums of the day (`paygate crypto costs`) show 0 TRX
// burned, and the hot wallet's liquid TRX is exactly what it was after staking.
//
// A payout to an address that holds no USDT yet is the dear transfer (a new
// storage slot: 130,285 energy instead of 64,285); a TRC20 transfer creates no
// TRON account, so there is no account-creation fee to count: that fee exists
// only for a TRX transfer to a new address (docs/payouts.md "Energy sources").
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { costsOfLastDays } from '../../../src/crypto/sending/transfer-costs.ts';
import { USDT_TRANSFER_BANDWIDTH } from '../../../src/crypto/sending/transfer-cost.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import { enqueuePayouts, executorFor, freshAddress, newLog } from '../sending/executor-support.ts';
import { advanceBlocks, energyManagerFor, energyStakeFor, freezeHotWallet, stakeFor, TRX } from './stake-support.ts';

const PAYOUTS = 1_000;
/** Every tenth payout goes to an address without USDT (the dear transfer). */
const NEW_HOLDER_EVERY = 10;
/** The day's payouts in this many batches, one every 24 h / BATCHES (36 minutes of blocks). */
const BATCHES = 40;
const BLOCKS_PER_DAY = 28_800;
const PAYOUT_AMOUNT = 1_000_000n;

describe.each(backends)('a day of 1,000 payouts on staked energy and bandwidth on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  it('every payout’s receipt burns 0 TRX for energy and bandwidth, its energy `staked`; the day’s costs show 0 TRX burned', async () => {
    const startedMs = performance.now();
    const startedCpu = process.cpuUsage();
    const chain = setup.sandbox.chain;
    const parameters = chain.parameters;
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    const recipients: TronAddress[] = [];
    for (let index = 0; index < PAYOUTS; index += 1) {
      const to = freshAddress();
      if (index % NEW_HOLDER_EVERY !== 0) chain.faucet(to, { trxSun: 1n, usdt: 1n });
      recipients.push(to);
    }
    const newHolders = BigInt(PAYOUTS / NEW_HOLDER_EVERY);
    const dayEnergy =
      (BigInt(PAYOUTS) - newHolders) * BigInt(parameters.transferEnergyExistingHolder) +
      newHolders * BigInt(parameters.transferEnergyNewHolder);
    const dayBandwidth = BigInt(PAYOUTS) * USDT_TRANSFER_BANDWIDTH;
    // Covering the whole day's use is the bound that holds however the payouts fall within it:
    // what is used at any moment is what was used in the last 24 h, less what recovered.
    const energyStakeTrx = energyStakeFor(setup, dayEnergy);
    const bandwidthStakeTrx = stakeFor(
      dayBandwidth,
      parameters.totalBandwidthLimit,
      chain.state.totalBandwidthWeightTrx,
    );
    const liquidTrx = 1_000n * TRX;
    chain.faucet(hotWallet, {
      trxSun: (energyStakeTrx + bandwidthStakeTrx) * TRX + liquidTrx,
      usdt: BigInt(PAYOUTS) * PAYOUT_AMOUNT,
    });
    await freezeHotWallet(setup, 'ENERGY', energyStakeTrx);
    await freezeHotWallet(setup, 'BANDWIDTH', bandwidthStakeTrx);
    const staked = await setup.access.node.getAccountResources(hotWallet);
    expect(BigInt(staked.energyAvailable)).toBeGreaterThanOrEqual(dayEnergy);
    const liquidAfterStaking = chain.state.account(hotWallet)!.balanceSun;

    const energyManager = energyManagerFor(setup, ['stake', 'burn']);
    // A burn cap of 0: a transfer that would burn anything at all waits instead.
    const executor = executorFor(setup, newLog(), { energyManager, maxBurnSun: 0n });
    const dayStart = setup.clock.now();
    const perBatch = PAYOUTS / BATCHES;
    const blocksPerBatch = BLOCKS_PER_DAY / BATCHES;
    let leastEnergyLeft = BigInt(staked.energyAvailable);
    for (let batch = 0; batch < BATCHES; batch += 1) {
      await enqueuePayouts(setup, recipients.slice(batch * perBatch, (batch + 1) * perBatch), PAYOUT_AMOUNT);
      expect(await executor.runPass()).toMatchObject({ signed: perBatch, waitingForBurnCap: 0, failed: 0 });
      const blocksBefore = chain.head.number;
      // Included, then solidified.
      advanceBlocks(setup, 1 + parameters.solidityDepth + 1);
      expect(await executor.runPass()).toMatchObject({ confirmed: perBatch });
      const left = BigInt((await setup.access.node.getAccountResources(hotWallet)).energyAvailable);
      if (left < leastEnergyLeft) leastEnergyLeft = left;
      advanceBlocks(setup, blocksPerBatch - (chain.head.number - blocksBefore));
    }
    const dayMs = performance.now() - startedMs;
    const dayCpu = process.cpuUsage(startedCpu);

    const sent = await setup.context.db
      .selectFrom('crypto_outgoing_transfers')
      .selectAll()
      .where('purpose', '=', 'payout')
      .execute();
    expect(sent).toHaveLength(PAYOUTS);
    for (const transfer of sent) {
      const receipt = chain.findTransaction(transfer.tx_id!)!.transaction.receipt;
      expect(receipt).toMatchObject({ result: 'SUCCESS', energyFeeSun: 0n, netFeeSun: 0n, feeSun: 0n });
      expect(receipt.energyUsage).toBe(receipt.energyUsageTotal);
      expect(transfer).toMatchObject({
        status: 'confirmed',
        energy_plan: 'staked',
        energy_source: 'staked',
        energy_used: BigInt(receipt.energyUsageTotal),
        energy_own: BigInt(receipt.energyUsageTotal),
        energy_fee_sun: 0n,
        bandwidth_used: BigInt(receipt.netUsage),
        bandwidth_fee_sun: 0n,
        fee_sun: 0n,
        cost_micro: 0n,
      });
    }
    // The custody view's sums over the day (the gateway's clock moved with the chain).
    const days = await costsOfLastDays(setup.context.db, setup.clock, 2);
    const sum = (field: 'transfers' | 'energy_used' | 'energy_staked' | 'energy_fee_sun' | 'bandwidth_fee_sun') =>
      days.reduce((total, row) => total + row[field], 0n);
    expect(sum('transfers')).toBe(BigInt(PAYOUTS));
    expect(sum('energy_used')).toBe(dayEnergy);
    expect(sum('energy_staked')).toBe(dayEnergy);
    expect(sum('energy_fee_sun')).toBe(0n);
    expect(sum('bandwidth_fee_sun')).toBe(0n);
    // Nothing at all was burned: the liquid TRX is what staking left.
    expect(chain.state.account(hotWallet)!.balanceSun).toBe(liquidAfterStaking);
    // The use recovered through the day: at its peak far less than the day's total was in use.
    const peakUse = BigInt(staked.energyAvailable) - leastEnergyLeft;
    expect(peakUse).toBeLessThan(dayEnergy);
    expect(setup.clock.now().getTime() - dayStart.getTime()).toBeGreaterThanOrEqual(
      BLOCKS_PER_DAY * parameters.blockIntervalMs,
    );
    console.info(
      `energy day on ${backend}: ${PAYOUTS} payouts in ${Math.round(dayMs)} ms (CPU ${Math.round((dayCpu.user + dayCpu.system) / 1_000)} ms); stake ${energyStakeTrx} TRX for ` +
        `${dayEnergy} energy (limit ${staked.energyAvailable}), ${bandwidthStakeTrx} TRX for ${dayBandwidth} bytes; ` +
        `peak energy in use ${peakUse}`,
    );
  });
});
