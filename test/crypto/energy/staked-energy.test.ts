// The hot wallet's own staked energy, through the real sending path: the hot
// wallet freezes TRX with a FreezeBalanceV2 transaction on the simulated chain,
// the energy manager reads its energy from the node (getaccountresource) and
// plans `staked`, the payout's receipt shows nothing burned for energy; once the
// stake is used up, the next payout burns for what is missing and says so. And
// the executor's half of `delegate`: the hot wallet's stake delegated to a
// deposit address pays that address's sweep, then is taken back.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEnergyManager } from '../../../src/crypto/energy/energy-manager.ts';
import { findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import {
  enqueuePayout,
  executorFor,
  freshAddress,
  fundHotWallet,
  mineToFinal,
  newLog,
  type HandlerLog,
} from '../sending/executor-support.ts';

const TRX = 1_000_000n;

describe.each(backends)('the hot wallet’s staked energy on %s', (backend) => {
  let setup: ReceivingSetup;
  let log: HandlerLog;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    log = newLog();
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  /** Freezes `trx` of the hot wallet for energy through a signed FreezeBalanceV2 transaction. */
  async function stakeHotWallet(trx: bigint): Promise<void> {
    const key = (await setup.access.signingKey()).hotWalletPrivateKey();
    const outcome = setup.sandbox.chain.sendStake(
      {
        type: 'FreezeBalanceV2Contract',
        ownerAddress: setup.access.addressKey.hotWalletAddress,
        frozenBalanceSun: trx * TRX,
        resource: 'ENERGY',
      },
      key,
    );
    expect(outcome.result).toBe(true);
    setup.sandbox.chain.mine(1);
  }

  it('a payout from a staked hot wallet burns no TRX for energy (`staked`); once the stake is used up, the next one burns', async () => {
    fundHotWallet(setup, 1_000_000_000n, 100_000n * TRX);
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    // ~9.5 energy a day per staked TRX: enough for one dear USDT transfer, not for two.
    await stakeHotWallet(20_000n);
    const staked = BigInt((await setup.access.node.getAccountResources(hotWallet)).energyAvailable);
    const energyManager = createEnergyManager({
      db: setup.context.db,
      clock: setup.clock,
      logger: setup.context.logger,
      chain: 'tron-sandbox',
      sources: new Set(['stake', 'burn']),
    });
    const executor = executorFor(setup, log, { energyManager });

    const first = await enqueuePayout(setup, freshAddress(), 3_000_000n);
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    const sent = (await findTransfer(setup.context.db, first.id))!;
    const receipt = (await setup.access.node.getTransactionOutcome(sent.tx_id!))!;
    expect(receipt.energyUsed).toBeGreaterThan(0);
    expect(receipt.energyFeeSun).toBe(0n);
    expect(sent).toMatchObject({
      energy_plan: 'staked',
      energy_source: 'staked',
      energy_own: BigInt(receipt.energyUsed),
      energy_fee_sun: 0n,
      rental_sun: null,
    });
    const left = BigInt((await setup.access.node.getAccountResources(hotWallet)).energyAvailable);
    expect(left).toBeLessThan(staked);

    const second = await enqueuePayout(setup, freshAddress(), 3_000_000n);
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    const after = (await findTransfer(setup.context.db, second.id))!;
    const afterReceipt = (await setup.access.node.getTransactionOutcome(after.tx_id!))!;
    // What the stake still had is used, the rest burned at the chain's price.
    expect(afterReceipt.energyFeeSun).toBeGreaterThan(0n);
    expect(after.energy_own).toBe(
      BigInt(afterReceipt.energyUsed) - afterReceipt.energyFeeSun / setup.sandbox.chain.parameters.energyPriceSun,
    );
    expect(after).toMatchObject({ energy_plan: 'staked', energy_source: 'mixed' });
    expect(log.final.map((transfer) => transfer.id)).toEqual([first.id, second.id]);
  });
  it('the hot wallet’s stake delegated to a deposit address (DelegateResource, lock false) pays its sweep’s energy (`delegated`), and is taken back after it lands', async () => {
    fundHotWallet(setup, 1_000_000_000n, 100_000n * TRX);
    const chain = setup.sandbox.chain;
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    await stakeHotWallet(20_000n);
    const key = await setup.access.signingKey();
    const index = 11;
    const deposit = key.address(index);
    // TRX for the bandwidth only: the energy is delegated.
    chain.faucet(deposit, { trxSun: 1n * TRX, usdt: 20_000_000n });
    const delegation = {
      ownerAddress: hotWallet,
      resource: 'ENERGY' as const,
      balanceSun: 15_000n * TRX,
      receiverAddress: deposit,
    };
    const delegated = chain.sendStake(
      { type: 'DelegateResourceContract', ...delegation, lock: false, lockPeriodBlocks: 0n },
      key.hotWalletPrivateKey(),
    );
    expect(delegated.result).toBe(true);
    chain.mine(1);
    expect(BigInt((await setup.access.node.getAccountResources(deposit)).energyAvailable)).toBeGreaterThan(64_285n);

    const energyManager = createEnergyManager({
      db: setup.context.db,
      clock: setup.clock,
      logger: setup.context.logger,
      chain: 'tron-sandbox',
      sources: new Set(['stake', 'delegate', 'burn']),
    });
    const executor = executorFor(setup, log, { energyManager });
    const sweep = await enqueuePayout(setup, hotWallet, 20_000_000n, {
      purpose: 'sweep',
      ownerId: 'swp_delegated',
      from: { kind: 'deposit_address', address: deposit, derivationIndex: index },
    });
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    const sent = (await findTransfer(setup.context.db, sweep.id))!;
    const receipt = (await setup.access.node.getTransactionOutcome(sent.tx_id!))!;
    expect(receipt.energyUsed).toBeGreaterThan(0);
    expect(receipt.energyFeeSun).toBe(0n);
    expect(sent).toMatchObject({ energy_plan: 'delegated', energy_source: 'delegated', energy_fee_sun: 0n });
    expect(chain.state.usdtBalance(deposit)).toBe(0n);

    const undelegated = chain.sendStake(
      { type: 'UnDelegateResourceContract', ...delegation },
      key.hotWalletPrivateKey(),
    );
    expect(undelegated.result).toBe(true);
    chain.mine(1);
    expect(await setup.access.node.getDelegatedResources(hotWallet, deposit)).toEqual([]);
    expect((await setup.access.node.getAccountResources(deposit)).energyAvailable).toBe(0);
  });
});
