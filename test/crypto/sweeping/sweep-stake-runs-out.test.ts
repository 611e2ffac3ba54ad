// Sweeps on delegated energy when the hot wallet's stake runs out mid-day, end to
// end (the real sweeper and executor, the simulated chain): the stake gives
// ~100,000 energy a day, enough to delegate for one sweep (64,285 + 10 %), and
// each sweep's use comes back to the hot wallet with its undelegation (java-tron
// unDelegateIncreaseV2), so the next sweep must wait for that use to recover over
// the day window. Three addresses are over the threshold at once:
//   - under a burn cap below a sweep's burn (6.4 TRX), the first is swept on
//     delegated energy and the others wait — no attempt, no top-up, nothing burned —
//     and each is swept on delegated energy once the stake has recovered;
//   - without a cap they burn at once (model A), beside the one delegated.
import { afterEach, describe, expect, it } from 'vitest';
import { sweepsOfAddress } from '../../../src/crypto/sweeping/sweeping-service.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound } from '../receiving/receiving-service-support.ts';
import { energyStakeFor, freezeHotWallet, TRX } from '../energy/stake-support.ts';
import { driveUntil, finalDepositOn, openSweepingSetup, type SweepingSetup } from './sweeping-support.ts';

const DELEGATING = new Set(['stake', 'delegate', 'burn'] as const);
const BLOCKS_PER_DAY = 28_800;

describe.each(backends)('sweeps when the stake runs out mid-day on %s', (backend) => {
  let setup: SweepingSetup;
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  /** The hot wallet holds USDT (a sweep to it takes 64,285 energy) and stakes for ~100,000 energy a day. */
  async function stakeForOneSweep(): Promise<void> {
    const stakeTrx = energyStakeFor(setup, 100_000n);
    setup.sandbox.chain.faucet(setup.hotWallet, { trxSun: stakeTrx * TRX + 1_000n * TRX, usdt: 1_000_000n });
    await freezeHotWallet(setup, 'ENERGY', stakeTrx);
  }

  async function threeAddresses(): Promise<TronAddress[]> {
    const addresses: TronAddress[] = [];
    for (const order of ['order-r1', 'order-r2', 'order-r3']) addresses.push(await finalDepositOn(setup, order, '60'));
    return addresses;
  }

  const lastSweep = async (address: TronAddress) => (await sweepsOfAddress(setup.context.db, address))[0];
  const sweptOnDelegated = (address: TronAddress) => async () => {
    const sweep = await lastSweep(address);
    return sweep?.status === 'completed' && sweep.undelegation_status === 'undelegated';
  };

  /** `slots` of the day pass with no block of ours (missed slots: the stake's use recovers by slots). */
  function pass(slots: number): void {
    setup.sandbox.chain.missSlots(slots - 1);
    setup.clock.advance(slots * setup.sandbox.chain.parameters.blockIntervalMs);
  }

  async function sweepTransfers() {
    return setup.context.db
      .selectFrom('crypto_outgoing_transfers')
      .selectAll()
      .where('purpose', '=', 'sweep')
      .execute();
  }

  it('under a burn cap below a sweep’s burn, the sweeps the stake cannot cover wait — no attempt, nothing burned — and go on delegated energy once it recovers', async () => {
    // Above a top-up's burn that creates the address (1.1 TRX), below a sweep burning its energy (6.4 TRX).
    setup = await openSweepingSetup(backend, { energySources: DELEGATING, executor: { maxBurnSun: 2n * TRX } });
    await stakeForOneSweep();
    const addresses = await threeAddresses();
    // The sweeper takes candidates in address order: whichever comes first gets the stake.
    const swept = async () => {
      const done = await Promise.all(addresses.map(async (address) => await sweptOnDelegated(address)()));
      return addresses.filter((_, index) => done[index]);
    };
    await driveUntil(setup, async () => (await swept()).length === 1);
    expect(await setup.sweep()).toMatchObject({ started: 0, waitingForStake: 2 });
    const [first] = await swept();
    // No attempt on the other two, nothing sent to them: no top-up for a burn the cap would then hold unsigned.
    const attempted = await setup.context.db.selectFrom('crypto_sweeps').select('address').execute();
    expect(attempted.map((row) => row.address)).toEqual([first]);
    const sentTo = await setup.context.db.selectFrom('crypto_outgoing_transfers').select('to_address').execute();
    expect(new Set(sentTo.map((transfer) => transfer.to_address))).toEqual(new Set([first, setup.hotWallet]));

    // Three quarters of a day: the first sweep's use has recovered enough for one more delegation, not two.
    pass((BLOCKS_PER_DAY * 3) / 4);
    await driveUntil(setup, async () => (await swept()).length === 2);
    expect(await setup.sweep()).toMatchObject({ started: 0, waitingForStake: 1 });

    pass(BLOCKS_PER_DAY);
    await driveUntil(setup, async () => (await swept()).length === 3);
    const sent = await sweepTransfers();
    expect(sent).toHaveLength(3);
    for (const transfer of sent)
      expect(transfer).toMatchObject({ status: 'confirmed', energy_source: 'delegated', energy_fee_sun: 0n });
    expect((await setup.access.node.getAccountStake(setup.hotWallet)).delegatedSun.ENERGY).toBe(0n);
  });

  it('without a cap, the sweeps the stake cannot cover burn at once beside the one delegated', async () => {
    setup = await openSweepingSetup(backend, { energySources: DELEGATING });
    await stakeForOneSweep();
    const addresses = await threeAddresses();
    await driveUntil(setup, async () => {
      const sweeps = await Promise.all(addresses.map(lastSweep));
      return sweeps.every((sweep) => sweep?.status === 'completed' && sweep.undelegation_status !== 'pending');
    });
    const sent = await sweepTransfers();
    const energy = BigInt(setup.sandbox.chain.parameters.transferEnergyExistingHolder);
    const price = setup.sandbox.chain.parameters.energyPriceSun;
    expect(sent.filter((transfer) => transfer.energy_source === 'delegated')).toHaveLength(1);
    const burned = sent.filter((transfer) => transfer.energy_source === 'burned');
    expect(burned).toHaveLength(2);
    for (const transfer of burned) expect(transfer.energy_fee_sun).toBe(energy * price);
  });
});
