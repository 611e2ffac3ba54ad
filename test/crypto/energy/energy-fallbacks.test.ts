// When the hot wallet's staked energy runs out, through the real executor on the
// simulated chain: 1,000 payouts queued at once are planned `staked` only for
// what the stake covers (the rest burn the difference: `mixed`, then `burned`,
// each under the burn cap), and a pass while they are in flight counts the
// energy they will take; a payout that would burn more than the cap waits
// unsigned until the stake's energy recovers over the chain's day window; with
// burning turned off a payout waits (never failed for it) until it recovers.
// Renting when cheaper is energy-rental.test.ts; the cap with no stake at all is
// burn-cap.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
import { USDT_TRANSFER_BANDWIDTH } from '../../../src/crypto/sending/transfer-cost.ts';
import type { TronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import {
  enqueuePayout,
  enqueuePayouts,
  executorFor,
  freshAddress,
  mineToFinal,
  newLog,
} from '../sending/executor-support.ts';
import { advanceBlocks, energyManagerFor, energyStakeFor, freezeHotWallet, TRX } from './stake-support.ts';

const BLOCKS_PER_DAY = 28_800;
const QUEUED = 1_000;
/** Payouts the stake covers whole; the next one it covers half of. */
const COVERED = 100n;

describe.each(backends)('when the staked energy runs out on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  /** Stakes the hot wallet for one and a half holder transfers a day, and funds it for the rest. */
  async function stakeOneAndAHalfTransfers(): Promise<void> {
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    const { energy } = holderTransfer();
    const stakeTrx = energyStakeFor(setup, (3n * energy) / 2n);
    setup.sandbox.chain.faucet(hotWallet, { trxSun: stakeTrx * TRX + 1_000n * TRX, usdt: 100_000_000n });
    await freezeHotWallet(setup, 'ENERGY', stakeTrx);
  }

  /** An address that already holds USDT: a transfer to it takes the holder's energy. */
  function holder(): TronAddress {
    const address = freshAddress();
    setup.sandbox.chain.faucet(address, { trxSun: 1n, usdt: 1n });
    return address;
  }

  /** Energy of a USDT transfer to a holder, and the TRX burned when none of it is covered (with its bytes). */
  function holderTransfer() {
    const parameters = setup.sandbox.chain.parameters;
    const energy = BigInt(parameters.transferEnergyExistingHolder);
    const fullBurnSun = energy * parameters.energyPriceSun + USDT_TRANSFER_BANDWIDTH * parameters.bandwidthPriceSun;
    return { energy, fullBurnSun };
  }

  it('1,000 payouts signed in one pass: `staked` planned only for what the stake covers, then `mixed`, then `burned`, each under the burn cap; a pass while they are in flight plans none on the stake', async () => {
    const chain = setup.sandbox.chain;
    const hotWallet = setup.access.addressKey.hotWalletAddress;
    const { energy, fullBurnSun } = holderTransfer();
    const stakeTrx = energyStakeFor(setup, COVERED * energy + energy / 2n);
    chain.faucet(hotWallet, { trxSun: stakeTrx * TRX + 20_000n * TRX, usdt: 2_000_000_000n });
    await freezeHotWallet(setup, 'ENERGY', stakeTrx);
    const stakeEnergy = BigInt((await setup.access.node.getAccountResources(hotWallet)).energyAvailable);
    expect(stakeEnergy).toBeGreaterThan(COVERED * energy);
    expect(stakeEnergy).toBeLessThan((COVERED + 1n) * energy);

    const executor = executorFor(setup, newLog(), {
      energyManager: energyManagerFor(setup, ['stake', 'burn']),
      maxBurnSun: fullBurnSun,
    });
    await enqueuePayouts(setup, Array.from({ length: QUEUED }, holder), 1_000_000n);
    expect(await executor.runPass()).toMatchObject({ signed: QUEUED, waitingForBurnCap: 0, failed: 0 });
    const planned = await plansOf(setup);
    // The stake covers 100 whole and part of the 101st: planned `staked` for those 101 and no more.
    expect(planned).toEqual({ staked: COVERED + 1n, burned: BigInt(QUEUED) - COVERED - 1n });

    // Not yet in a block: the node still shows the whole stake free, but the 1,000 in flight will take it.
    await enqueuePayouts(setup, Array.from({ length: 10 }, holder), 1_000_000n);
    expect(await executor.runPass()).toMatchObject({ signed: 10 });
    expect(await plansOf(setup)).toEqual({ staked: COVERED + 1n, burned: BigInt(QUEUED + 10) - COVERED - 1n });

    chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: QUEUED + 10 });
    const sent = await setup.context.db
      .selectFrom('crypto_outgoing_transfers')
      .select(['energy_source', 'energy_own', 'energy_fee_sun', 'fee_sun'])
      .where('purpose', '=', 'payout')
      .execute();
    const bySource = (source: string) => sent.filter((transfer) => transfer.energy_source === source);
    // In one block the chain takes the stake for whichever comes first: 100 whole, one in part, the rest none.
    expect(bySource('staked')).toHaveLength(Number(COVERED));
    expect(bySource('mixed')).toHaveLength(1);
    expect(bySource('burned')).toHaveLength(QUEUED + 10 - Number(COVERED) - 1);
    expect(sent.reduce((sum, transfer) => sum + transfer.energy_own!, 0n)).toBe(stakeEnergy);
    const [mixed] = bySource('mixed');
    expect(mixed!.energy_fee_sun).toBe(
      ((COVERED + 1n) * energy - stakeEnergy) * setup.sandbox.chain.parameters.energyPriceSun,
    );
    for (const transfer of bySource('burned'))
      expect(transfer.energy_fee_sun).toBe(energy * setup.sandbox.chain.parameters.energyPriceSun);
    for (const transfer of sent) expect(transfer.fee_sun!).toBeLessThanOrEqual(fullBurnSun);
  });

  it('a payout that would burn more than the cap waits unsigned while the stake is used, and is signed on it, burning nothing, once the energy recovers', async () => {
    // One and a half transfers a day: the second waits until half a day has given back what it lacks.
    await stakeOneAndAHalfTransfers();
    // Above the transfer's bytes (~0.35 TRX), below burning half its energy (~3.2 TRX).
    const executor = executorFor(setup, newLog(), {
      energyManager: energyManagerFor(setup, ['stake', 'burn']),
      maxBurnSun: 1n * TRX,
    });
    await sendOnStake(setup, executor);

    const waiting = await enqueuePayout(setup, holder(), 1_000_000n);
    expect(await executor.runPass()).toMatchObject({ signed: 0, waitingForBurnCap: 1 });
    advanceBlocks(setup, BLOCKS_PER_DAY / 4);
    expect(await executor.runPass()).toMatchObject({ signed: 0, waitingForBurnCap: 1, failed: 0 });
    expect(await findTransfer(setup.context.db, waiting.id)).toMatchObject({ status: 'queued', tx_id: null });

    advanceBlocks(setup, BLOCKS_PER_DAY / 2);
    await expectSentOnStake(setup, executor, waiting.id);
  });

  it('with burning turned off, a payout the stake cannot cover waits — past the funds wait, never failed — and goes on the stake once its energy recovers', async () => {
    await stakeOneAndAHalfTransfers();
    const executor = executorFor(setup, newLog(), {
      energyManager: energyManagerFor(setup, ['stake']),
      fundsWaitSeconds: 60,
    });
    await sendOnStake(setup, executor);

    const waiting = await enqueuePayout(setup, holder(), 1_000_000n);
    expect(await executor.runPass()).toMatchObject({ signed: 0, failed: 0 });
    // Six hours of blocks, far past the funds wait: still queued, unsigned.
    advanceBlocks(setup, BLOCKS_PER_DAY / 4);
    expect(await executor.runPass()).toMatchObject({ signed: 0, failed: 0 });
    expect(await findTransfer(setup.context.db, waiting.id)).toMatchObject({ status: 'queued', tx_id: null });

    advanceBlocks(setup, BLOCKS_PER_DAY / 2);
    await expectSentOnStake(setup, executor, waiting.id);
  });

  async function plansOf(current: ReceivingSetup): Promise<Record<string, bigint>> {
    const rows = await current.context.db
      .selectFrom('crypto_outgoing_transfers')
      .select(['energy_plan'])
      .where('purpose', '=', 'payout')
      .execute();
    const counts: Record<string, bigint> = {};
    for (const row of rows) counts[row.energy_plan ?? 'none'] = (counts[row.energy_plan ?? 'none'] ?? 0n) + 1n;
    return counts;
  }

  /** One payout sent whole on the stake. */
  async function sendOnStake(current: ReceivingSetup, executor: ReturnType<typeof executorFor>): Promise<void> {
    const payout = await enqueuePayout(current, holder(), 1_000_000n);
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    current.sandbox.chain.mine(1);
    mineToFinal(current);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    expect(await findTransfer(current.context.db, payout.id)).toMatchObject({
      energy_source: 'staked',
      energy_fee_sun: 0n,
    });
  }

  async function expectSentOnStake(
    current: ReceivingSetup,
    executor: ReturnType<typeof executorFor>,
    transferId: string,
  ): Promise<void> {
    expect(await executor.runPass()).toMatchObject({ signed: 1, waitingForBurnCap: 0 });
    current.sandbox.chain.mine(1);
    mineToFinal(current);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    expect(await findTransfer(current.context.db, transferId)).toMatchObject({
      status: 'confirmed',
      energy_plan: 'staked',
      energy_source: 'staked',
      energy_fee_sun: 0n,
    });
  }
});
