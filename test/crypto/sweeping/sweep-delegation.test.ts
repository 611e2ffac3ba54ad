// Sweeps on delegated energy, end to end on the real database, the real sweeper
// and sign-once executor and the simulated chain over HTTP: with `delegate`
// among the energy sources and a staked hot wallet, an attempt tops the address
// up for bandwidth only (creating it), the hot wallet delegates the energy
// (DelegateResource), the sweep burns nothing for energy, and the energy is taken
// back (UnDelegateResource) — after a failed sweep too, exactly once across
// crashes; a hot wallet whose stake cannot cover it falls back to burning.
import { afterEach, describe, expect, it } from 'vitest';
import { claimOwnEnergy } from '../../../src/crypto/energy/energy-reservations.ts';
import { createInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { mineBlocks, simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import { tronAddress } from '../../../src/crypto/tron/address.ts';
import { delegationKey } from '../../../src/crypto/simchain/chain-state.ts';
import { ExecutorStepCrash, type ExecutorStep } from '../../../src/crypto/sending/executor-context.ts';
import { findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
import { USDT_TRANSFER_BANDWIDTH } from '../../../src/crypto/sending/transfer-cost.ts';
import { delegationSunFor } from '../../../src/crypto/sweeping/sweep-delegation.ts';
import { retrySweepsOfAddress, sweepsOfAddress, sweepView } from '../../../src/crypto/sweeping/sweeping-service.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound } from '../receiving/receiving-service-support.ts';
import {
  driveUntil,
  finalDepositOn,
  openSweepingSetup,
  sweepingOver,
  trxOf,
  usdtOf,
  type SweepingSetup,
} from './sweeping-support.ts';

const TRX = 1_000_000n;
const DELEGATING = new Set(['stake', 'delegate', 'burn'] as const);

describe('the TRX delegated for an amount of energy', () => {
  it('is java-tron’s frozen TRX × totalEnergyLimit / totalEnergyWeight solved for the energy, in whole TRX, rounded up, with 10 % more', () => {
    // Mainnet-like: 180e9 energy a day over 19e9 staked TRX, ~9.47 energy per TRX.
    const network = { totalEnergyLimit: 180_000_000_000, totalEnergyWeight: 19_000_000_000 };
    const sun = delegationSunFor(64_285n, network);
    expect(sun % TRX).toBe(0n);
    const energyOf = (delegated: bigint) =>
      ((delegated / TRX) * BigInt(network.totalEnergyLimit)) / BigInt(network.totalEnergyWeight);
    expect(energyOf(sun)).toBeGreaterThanOrEqual(70_713n);
    expect(energyOf(sun - TRX)).toBeLessThan(70_714n);
    expect(delegationSunFor(0n, network)).toBe(0n);
  });
});

describe.each(backends)('sweeps on delegated energy on %s', (backend) => {
  let setup: SweepingSetup;
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  /** Freezes `trx` of the hot wallet for energy (FreezeBalanceV2, signed with its key). */
  async function stakeHotWallet(trx: bigint): Promise<void> {
    const chain = setup.sandbox.chain;
    chain.faucet(setup.hotWallet, { trxSun: trx * TRX + 1_000n * TRX, usdt: 1_000_000_000n });
    const key = (await setup.access.signingKey()).hotWalletPrivateKey();
    const outcome = chain.sendStake(
      {
        type: 'FreezeBalanceV2Contract',
        ownerAddress: setup.hotWallet,
        frozenBalanceSun: trx * TRX,
        resource: 'ENERGY',
      },
      key,
    );
    expect(outcome.result).toBe(true);
    chain.mine(1);
  }

  const lastSweep = async (address: TronAddress) => (await sweepsOfAddress(setup.context.db, address))[0];
  const energyTransfers = (purpose: 'energy_delegation' | 'energy_undelegation') =>
    setup.context.db.selectFrom('crypto_outgoing_transfers').selectAll().where('purpose', '=', purpose).execute();
  const attemptsOf = (transferId: string) =>
    setup.context.db.selectFrom('crypto_outgoing_attempts').selectAll().where('transfer_id', '=', transferId).execute();
  const delegatedOut = async () => (await setup.access.node.getAccountStake(setup.hotWallet)).delegatedSun.ENERGY;
  const takenBack = (address: TronAddress) => async () => {
    const sweep = await lastSweep(address);
    return sweep?.undelegation_status === 'undelegated';
  };

  it('a sweep burns no TRX for energy (`delegated`), tops up bandwidth only, and the energy is taken back after it', async () => {
    setup = await openSweepingSetup(backend, { energySources: DELEGATING });
    await stakeHotWallet(50_000n);
    const address = await finalDepositOn(setup, 'order-d1', '60');
    await driveUntil(setup, takenBack(address));

    const sweep = (await lastSweep(address))!;
    expect(sweep).toMatchObject({ status: 'completed', amount_micro: 60_000_000n, activated_before: false });
    expect(sweep.delegated_sun).toBeGreaterThan(0n);
    // Only the bandwidth of the USDT transfer, sent once (it also created the address).
    const prices = await setup.access.node.getChainPrices();
    expect(sweep.topup_sun).toBe(USDT_TRANSFER_BANDWIDTH * prices.bandwidthPriceSun);
    const sent = (await findTransfer(setup.context.db, sweep.sweep_transfer_id!))!;
    const receipt = (await setup.access.node.getTransactionOutcome(sent.tx_id!))!;
    expect(receipt.energyUsed).toBeGreaterThan(0);
    expect(receipt.energyFeeSun).toBe(0n);
    expect(sent).toMatchObject({ energy_source: 'delegated', energy_fee_sun: 0n });
    expect(await usdtOf(setup, address)).toBe(0n);

    const [delegation] = await energyTransfers('energy_delegation');
    const [undelegation] = await energyTransfers('energy_undelegation');
    expect(delegation).toMatchObject({ status: 'confirmed', asset: 'ENERGY', amount: sweep.delegated_sun });
    expect(undelegation).toMatchObject({ status: 'confirmed', asset: 'ENERGY', amount: sweep.delegated_sun });
    expect(sweep).toMatchObject({
      delegation_transfer_id: delegation!.id,
      undelegation_transfer_id: undelegation!.id,
      undelegation_attempts: 1,
    });
    expect(await delegatedOut()).toBe(0n);
    expect(await setup.access.node.getDelegatedResources(setup.hotWallet, address)).toEqual([]);
    expect(sweepView(sweep)).toMatchObject({ undelegation: 'undelegated' });
    // What was topped up and not burned stays for the next sweep of the address.
    expect(await trxOf(setup, address)).toBeLessThanOrEqual(sweep.topup_sun);
  });

  it('without enough stake on the hot wallet, the sweep burns TRX for its energy as before', async () => {
    setup = await openSweepingSetup(backend, { energySources: DELEGATING });
    await stakeHotWallet(100n);
    const address = await finalDepositOn(setup, 'order-d2', '60');
    await driveUntil(setup, async () => (await lastSweep(address))?.status === 'completed');
    const sweep = (await lastSweep(address))!;
    expect(sweep.delegated_sun).toBeNull();
    expect(await energyTransfers('energy_delegation')).toEqual([]);
    const sent = (await findTransfer(setup.context.db, sweep.sweep_transfer_id!))!;
    expect(sent.energy_fee_sun).toBeGreaterThan(0n);
    expect(sweep.topup_sun).toBeGreaterThan(USDT_TRANSFER_BANDWIDTH * 1_000n);
  });

  it('energy reserved for quoted payouts is not delegated: with the stake promised, the sweep burns', async () => {
    setup = await openSweepingSetup(backend, { energySources: DELEGATING });
    await stakeHotWallet(50_000n);
    const free = BigInt((await setup.access.node.getAccountResources(setup.hotWallet)).energyAvailable);
    // A payout's claim (its transfer not written yet, so live for the claim's grace) on all but 10,000 of it.
    const granted = await claimOwnEnergy(setup.context.db, setup.clock, setup.access.chain, free, [
      { transferId: 'ot_reserved_for_a_quote', energy: free - 10_000n },
    ]);
    expect(granted.size).toBe(1);
    const address = await finalDepositOn(setup, 'order-d7', '60');
    await driveUntil(setup, async () => (await lastSweep(address))?.status === 'completed');
    const sweep = (await lastSweep(address))!;
    expect(sweep.delegated_sun).toBeNull();
    expect(await energyTransfers('energy_delegation')).toEqual([]);
    expect(await delegatedOut()).toBe(0n);
  });

  it('a sweep that fails still takes the energy back', async () => {
    setup = await openSweepingSetup(backend, { energySources: DELEGATING });
    await stakeHotWallet(50_000n);
    const address = await finalDepositOn(setup, 'order-d3', '60');
    // Listed while its energy is being delegated: the USDT transfer cannot go out.
    await driveUntil(setup, async () => (await lastSweep(address))?.status === 'delegating');
    setup.sandbox.chain.setBlacklisted(address, true);
    await driveUntil(setup, takenBack(address));
    const sweep = (await lastSweep(address))!;
    expect(sweep).toMatchObject({ status: 'failed', error_code: 'address_blacklisted' });
    expect(await energyTransfers('energy_undelegation')).toHaveLength(1);
    expect(await delegatedOut()).toBe(0n);
  });

  it('energy that cannot be taken back (undelegated by hand meanwhile) is tried 3 times, then shown failed to the operator, and a retry sends it again', async () => {
    setup = await openSweepingSetup(backend, { energySources: DELEGATING });
    await stakeHotWallet(50_000n);
    const address = await finalDepositOn(setup, 'order-d5', '60');
    const chain = setup.sandbox.chain;
    const hotWalletKey = (await setup.access.signingKey()).hotWalletPrivateKey();
    let handUndelegated = false;
    // Someone with the hot wallet's key takes the delegation back by hand once the sweep has landed, before
    // the executor signs ours (while it records the sweep final): ours can never pass.
    const process = sweepingOver(setup, {
      energySources: DELEGATING,
      onStep: (step) => {
        const delegation = chain.state.delegations.get(delegationKey(setup.hotWallet, address, false));
        if (step !== 'inside-finish' || handUndelegated || chain.state.usdtBalance(address) !== 0n || !delegation)
          return;
        const outcome = chain.sendStake(
          {
            type: 'UnDelegateResourceContract',
            ownerAddress: setup.hotWallet,
            resource: 'ENERGY',
            balanceSun: delegation.balanceSun.ENERGY,
            receiverAddress: address,
          },
          hotWalletKey,
        );
        expect(outcome.result).toBe(true);
        handUndelegated = true;
      },
    });
    await driveUntil(process, async () => (await lastSweep(address))?.undelegation_status === 'failed', 400);
    expect(handUndelegated).toBe(true);
    const sweep = (await lastSweep(address))!;
    expect(sweep).toMatchObject({ status: 'completed', undelegation_attempts: 3 });
    expect(await energyTransfers('energy_undelegation')).toHaveLength(3);
    expect(sweepView(sweep)).toMatchObject({ undelegation: 'failed' });

    await retrySweepsOfAddress(setup.sweeping, address);
    expect(await lastSweep(address)).toMatchObject({ undelegation_status: 'pending', undelegation_attempts: 4 });
    expect(await energyTransfers('energy_undelegation')).toHaveLength(4);
  });

  it.each<ExecutorStep>(['after-sign', 'after-broadcast', 'before-finish', 'inside-finish'])(
    'a process that crashes %s of every transfer, rebuilt over the same database and chain, delegates once and takes back once',
    async (crashAt) => {
      setup = await openSweepingSetup(backend, { energySources: DELEGATING });
      await stakeHotWallet(50_000n);
      const address = await finalDepositOn(setup, 'order-d4', '60');
      let crashes = 0;
      for (let round = 0; round < 200; round += 1) {
        if (await takenBack(address)()) break;
        // A new process: new executor (the old one's lease runs out first), new sweeper, nothing kept in memory.
        let crashed = false;
        const process = sweepingOver(setup, {
          energySources: DELEGATING,
          onStep: (step) => {
            if (step === crashAt && crashes < 8) {
              crashes += 1;
              crashed = true;
              throw new ExecutorStepCrash(step);
            }
          },
        });
        await process.executorPass().catch((error: unknown) => {
          if (!(error instanceof ExecutorStepCrash)) throw error;
        });
        await process.sweep();
        setup.sandbox.chain.mine(1);
        setup.clock.advance(crashed ? 31_000 : 3_000);
      }
      expect(await takenBack(address)()).toBe(true);
      // Each of the four transfers (top-up, delegation, sweep, undelegation) crashed at least once there.
      expect(crashes).toBeGreaterThanOrEqual(4);
      const delegations = await energyTransfers('energy_delegation');
      const undelegations = await energyTransfers('energy_undelegation');
      expect(delegations).toHaveLength(1);
      expect(undelegations).toHaveLength(1);
      for (const transfer of [...delegations, ...undelegations]) expect(await attemptsOf(transfer.id)).toHaveLength(1);
      expect((await lastSweep(address))?.status).toBe('completed');
      expect(await delegatedOut()).toBe(0n);
    },
  );

  it('50 addresses swept in one simulated day, each on delegated energy: 0 TRX burned for energy, every delegation taken back', async () => {
    setup = await openSweepingSetup(backend, { energySources: DELEGATING });
    // ~7,500 TRX per sweep in flight at once, for 50 of them.
    await stakeHotWallet(450_000n);
    const startedAt = setup.clock.now().getTime();
    const addresses: TronAddress[] = [];
    for (let index = 0; index < 50; index += 1) {
      const { invoice } = await createInvoice(setup.deps, setup.shop, {
        external_id: `order-many-${index}`,
        amount: '60',
        network: 'TRC20',
      });
      await simulateDeposit(setup.deps, setup.shop, { address: invoice.address, amount: '60' });
      addresses.push(tronAddress(invoice.address));
    }
    await mineBlocks(setup.deps, setup.shop, 1);
    await setup.defaultWatcher.runPass();
    await mineBlocks(setup.deps, setup.shop, setup.sandbox.chain.parameters.solidityDepth);
    await setup.defaultWatcher.runPass();

    const allTakenBack = async () =>
      (
        await setup.context.db
          .selectFrom('crypto_sweeps')
          .select('id')
          .where('undelegation_status', '=', 'undelegated')
          .where('status', '=', 'completed')
          .execute()
      ).length === addresses.length;
    await driveUntil(setup, allTakenBack, 200);
    expect(setup.clock.now().getTime() - startedAt).toBeLessThan(86_400_000);

    const sweeps = await setup.context.db.selectFrom('crypto_sweeps').selectAll().execute();
    expect(sweeps).toHaveLength(50);
    expect(new Set(sweeps.map((sweep) => sweep.address))).toEqual(new Set(addresses));
    const transfers = await setup.context.db
      .selectFrom('crypto_outgoing_transfers')
      .selectAll()
      .where('purpose', '=', 'sweep')
      .execute();
    expect(transfers).toHaveLength(50);
    for (const transfer of transfers)
      // The address's free bandwidth pays the bytes too: the sweep itself burns nothing.
      expect(transfer).toMatchObject({
        status: 'confirmed',
        energy_source: 'delegated',
        energy_fee_sun: 0n,
        fee_sun: 0n,
      });
    expect(await energyTransfers('energy_delegation')).toHaveLength(50);
    expect(await energyTransfers('energy_undelegation')).toHaveLength(50);
    expect(await delegatedOut()).toBe(0n);
  });
});
