// The hot wallet's own energy for its payouts leaves out what it delegates away
// (a sweep's DelegateResource, sweep-delegation.ts), through the real executor
// on the simulated chain: java-tron's DelegateResourceActuator moves the staked
// TRX from frozenV2 (which the owner's energy limit counts) to
// delegated_frozenV2 (which it does not), so the node shows the smaller energy
// once the delegation is in a block. Before that, a delegation signed earlier in
// the pass, or in flight from an earlier one, is counted by the executor itself:
// a payout is never planned `staked` on energy the delegation will take, so one
// the rest cannot cover waits under the burn cap instead of burning past it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inTransaction } from '../../../src/db/transaction.ts';
import { findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
import { enqueueOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { delegationSunFor } from '../../../src/crypto/sweeping/sweep-delegation.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import {
  enqueuePayout,
  executorFor,
  freshAddress,
  mineToFinal,
  newLog,
  recordingHandler,
} from '../sending/executor-support.ts';
import { energyManagerFor, energyStakeFor, freezeHotWallet, TRX } from './stake-support.ts';

describe.each(backends)('own energy delegated away on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  /**
   * A stake of 100,000 energy a day: one payout (64,285) fits, and so does a sweep's
   * delegation (64,285 + 10 %), but not both: after the delegation ~29,000 are left.
   */
  async function stakeForOneOfThem(): Promise<{ delegatedSun: bigint; energy: bigint }> {
    const chain = setup.sandbox.chain;
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    const stakeTrx = energyStakeFor(setup, 100_000n);
    chain.faucet(hotWallet, { trxSun: stakeTrx * TRX + 1_000n * TRX, usdt: 100_000_000n });
    await freezeHotWallet(setup, 'ENERGY', stakeTrx);
    const resources = await setup.access.node.getAccountResources(hotWallet);
    const energy = BigInt(resources.energyAvailable);
    const transferEnergy = BigInt(chain.parameters.transferEnergyExistingHolder);
    const delegatedSun = delegationSunFor(transferEnergy, resources);
    expect(energy).toBeGreaterThan(transferEnergy);
    return { delegatedSun, energy };
  }

  function executor() {
    const log = newLog();
    return executorFor(setup, log, {
      handlers: { payout: recordingHandler(log), energy_delegation: recordingHandler(log) },
      energyManager: energyManagerFor(setup, ['stake', 'delegate', 'burn']),
      // Above a payout's bytes, below burning the energy the delegation takes.
      maxBurnSun: 1n * TRX,
    });
  }

  /** An activated deposit address (a delegation's receiver must exist). */
  function receiver(): TronAddress {
    const address = freshAddress();
    setup.sandbox.chain.faucet(address, { trxSun: 1n * TRX, usdt: 0n });
    return address;
  }

  function holder(): TronAddress {
    const address = freshAddress();
    setup.sandbox.chain.faucet(address, { trxSun: 1n, usdt: 1n });
    return address;
  }

  const enqueueDelegation = (to: TronAddress, amount: bigint) =>
    inTransaction(setup.context.db, (tx) =>
      enqueueOutgoingTransfer(tx, setup.clock, {
        chain: 'tron-sandbox',
        purpose: 'energy_delegation',
        ownerId: 'sweep_test',
        asset: 'ENERGY',
        from: { kind: 'hot_wallet' },
        to,
        amount,
      }),
    );

  it('a payout after a delegation signed in the same pass is not planned on the delegated energy: it waits under the burn cap', async () => {
    const { delegatedSun } = await stakeForOneOfThem();
    const sending = executor();
    await enqueueDelegation(receiver(), delegatedSun);
    const payout = await enqueuePayout(setup, holder(), 1_000_000n);
    expect(await sending.runPass()).toMatchObject({ signed: 1, waitingForBurnCap: 1, failed: 0 });
    expect(await findTransfer(setup.context.db, payout.id)).toMatchObject({ status: 'queued', tx_id: null });

    // On chain the node shows the smaller energy itself: the payout still waits.
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await sending.runPass()).toMatchObject({ confirmed: 1, signed: 0, waitingForBurnCap: 1 });
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    expect((await setup.access.node.getAccountStake(hotWallet)).delegatedSun.ENERGY).toBe(delegatedSun);
  });

  it('a payout while a delegation signed in an earlier pass is in flight is not planned on its energy either', async () => {
    const { delegatedSun } = await stakeForOneOfThem();
    const sending = executor();
    await enqueueDelegation(receiver(), delegatedSun);
    expect(await sending.runPass()).toMatchObject({ signed: 1 });
    // The node still shows the whole stake's energy: the delegation is not in a block yet.
    const payout = await enqueuePayout(setup, holder(), 1_000_000n);
    expect(await sending.runPass()).toMatchObject({ signed: 0, waitingForBurnCap: 1, failed: 0 });
    expect(await findTransfer(setup.context.db, payout.id)).toMatchObject({ status: 'queued' });
  });

  it('with the stake covering both, the payout is signed beside the delegation and burns nothing', async () => {
    const chain = setup.sandbox.chain;
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    const stakeTrx = energyStakeFor(setup, 200_000n);
    chain.faucet(hotWallet, { trxSun: stakeTrx * TRX + 1_000n * TRX, usdt: 100_000_000n });
    await freezeHotWallet(setup, 'ENERGY', stakeTrx);
    const resources = await setup.access.node.getAccountResources(hotWallet);
    const sending = executor();
    await enqueueDelegation(
      receiver(),
      delegationSunFor(BigInt(chain.parameters.transferEnergyExistingHolder), resources),
    );
    const payout = await enqueuePayout(setup, holder(), 1_000_000n);
    expect(await sending.runPass()).toMatchObject({ signed: 2, waitingForBurnCap: 0 });
    chain.mine(1);
    mineToFinal(setup);
    expect(await sending.runPass()).toMatchObject({ confirmed: 2 });
    expect(await findTransfer(setup.context.db, payout.id)).toMatchObject({
      status: 'confirmed',
      energy_source: 'staked',
      energy_fee_sun: 0n,
    });
  });
});
